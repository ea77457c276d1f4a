-- harness.lua, the fake researcher's first edit (tests/e2e/track_harness.sh):
-- the default harness plus deduplication. A verified kernel the model wrote
-- k times in a round (or again in a later round) is one example, not k: the
-- pool keeps every verified sample, so without this the SFT set repeats the
-- easiest tasks' kernels and drowns the rest. At most 4 distinct kernels a
-- task, best score first.
function harness(ctx)
  local seen, per_task, chosen = {}, {}, {}
  local order = {}
  for i, e in ipairs(ctx.pool) do
    order[i] = e
  end
  table.sort(order, function(a, b)
    if a.score ~= b.score then
      return a.score > b.score
    end
    return a.id < b.id
  end)
  for _, e in ipairs(order) do
    local key = e.task .. "/" .. e.hash
    local n = per_task[e.task] or 0
    if not seen[key] and n < 4 and #chosen < ctx.defaults.max_examples then
      seen[key] = true
      per_task[e.task] = n + 1
      chosen[#chosen + 1] = { id = e.id }
    end
  end
  ka.log(string.format("%d distinct examples of %d pool entries", #chosen, #ctx.pool))
  return { examples = chosen, hyper = ctx.defaults }
end
