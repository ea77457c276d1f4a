-- self_refine: generate, check, and revise with the grader's evidence until
-- a version is correct or the budget is spent; the best version submitted.
local function fence(code)
  return "\n\n## Your previous attempt\n\n```\n" .. code .. "```\n"
end

function solve()
  local best, best_score = nil, -1
  local feedback = ""
  while ka.budget().requests > 0 do
    local reply = ka.generate(ka.prompt({examples = "", feedback = feedback}))
    if not reply then break end
    local code = ka.extract(reply)
    if not code then
      feedback = "\n\nYour previous reply had no code block in the target language.\n"
    else
      if ka.budget().checks <= 0 then
        if best_score < 0 then best, best_score = code, 0 end
        break
      end
      local v = ka.check(code)
      if v.score > best_score then best, best_score = code, v.score end
      if v.ok then break end
      feedback = fence(code) .. "\nThe grader said: " .. v.verdict ..
        " (phase " .. v.phase .. "). " .. v.detail .. "\nFix it.\n"
    end
  end
  if best then ka.submit(best) end
end
