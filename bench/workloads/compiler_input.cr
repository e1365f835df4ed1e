# compiler_input.cr -- what bench/compiler.sh and bench/daemon_cost.sh have
# Debian's `crystal` compiler type-check (`crystal build --no-codegen`): 10
# lines that require json and http/server, so that the compiler's work is
# the standard library's (1.12M distinct allocation stacks of ~107 frames).
require "json"
require "http/server"

server = HTTP::Server.new do |context|
  context.response.content_type = "application/json"
  context.response.print({"hello" => "world"}.to_json)
end
puts server.class
x = JSON.parse(%({"a": 1}))
puts x["a"]
