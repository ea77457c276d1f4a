-- best_of_k: as many independent samples as the budget allows, each
-- checked, the best-scoring one submitted (the first on a tie).
function solve()
  local prompt = ka.prompt({examples = "", feedback = ""})
  local best, best_score = nil, -1
  while ka.budget().requests > 0 do
    local reply = ka.generate(prompt)
    if not reply then break end
    local code = ka.extract(reply)
    if code then
      local score = 0
      if ka.budget().checks > 0 then
        local v = ka.check(code)
        score = v.score
      end
      if score > best_score then best, best_score = code, score end
    end
  end
  if best then ka.submit(best) end
end
