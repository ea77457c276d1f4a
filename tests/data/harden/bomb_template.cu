// expect: compile_error
// A template bomb: X<N, T> nests P<T, T> N times, a type of 2^48 leaves that
// the compiler tries to spell out in its error message (memory cap).
template <class A, class B> struct P {};
template <int N, class T> struct X { typedef typename X<N - 1, P<T, T> >::type type; };
template <class T> struct X<0, T> { typedef T type; };
typedef X<48, int>::type T;
extern "C" int bomb(void) { return T::nonexistent; }
