-- retrieval: verified kernels of similar train tasks from the archive put in
-- the prompt as examples, then best-of-k with the rest of the budget.
function solve()
  local t = ka.task()
  local hits = ka.archive.search(t.name .. " " .. t.description, 2)
  local ex = ""
  for _, h in ipairs(hits) do
    ex = ex .. "\n\n## A verified kernel of a similar task (" .. h.task .. ")\n\n```" ..
      t.language .. "\n" .. h.code .. "```\n"
  end
  local prompt = ka.prompt({examples = ex, feedback = ""})
  local best, best_score = nil, -1
  while ka.budget().requests > 0 do
    local reply = ka.generate(prompt)
    if not reply then break end
    local code = ka.extract(reply)
    if code then
      local score = 0
      if ka.budget().checks > 0 then score = ka.check(code).score end
      if score > best_score then best, best_score = code, score end
    end
  end
  if best then ka.submit(best) end
end
