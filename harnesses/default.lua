-- harness.lua, round 0: the shipped default harness of track 4
-- (docs/harness.md). Every verified train kernel in the pool becomes one SFT
-- example, in the order the pool holds them (round by round, as sampled),
-- with the prompt and completion the model wrote, until max_examples; the
-- hyperparameters are ka's defaults. No deduplication, no per-task cap, no
-- weighting, no curriculum: each is left to the researcher.
function harness(ctx)
  local examples = {}
  local cap = ctx.defaults.max_examples
  for _, e in ipairs(ctx.pool) do
    if #examples >= cap then
      break
    end
    examples[#examples + 1] = { id = e.id }
  end
  ka.log(string.format("round %d: %d of %d pool entries", ctx.round, #examples, #ctx.pool))
  return { examples = examples, hyper = ctx.defaults, order = "shuffle" }
end
