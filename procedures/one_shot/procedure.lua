-- one_shot: one generation, its kernel submitted as it is (the method of
-- the capability track). Uses one generation and no check.
function solve()
  local reply, err = ka.generate(ka.prompt({examples = "", feedback = ""}))
  if not reply then
    ka.log("generate failed: " .. tostring(err))
    return
  end
  local code = ka.extract(reply)
  if code then ka.submit(code) end
end
