# bench/workloads/http_json.cr: an HTTP::Server answering JSON, the workload
# of bench/http_server.sh. Each request builds a small order document from
# the query and serializes it, as a typical JSON API does. Listens on
# 127.0.0.1:PORT (ARGV[0], default 8087) and prints "listening" when ready.
# GET /count answers the requests served so far (tests that need the
# number of requests inside a window).
require "http/server"
require "json"

struct Item
  include JSON::Serializable
  getter sku : String
  getter qty : Int32
  getter price : Float64

  def initialize(@sku, @qty, @price)
  end
end

class Reply
  include JSON::Serializable
  getter id : Int64
  getter customer : String
  getter tags : Array(String)
  getter items : Array(Item)

  def initialize(@id, @customer, @tags, @items)
  end
end

port = (ARGV[0]? || "8087").to_i
counter = 0_i64
server = HTTP::Server.new do |context|
  if context.request.path == "/count"
    context.response.print counter
    next
  end
  counter += 1
  id = (context.request.query_params["id"]? || counter.to_s).to_i64
  items = Array.new(1 + id % 4) { |k| Item.new("sku-#{(id * 7 + k) % 101}", k.to_i32 + 1, (id % 13) + 0.25 * k) }
  reply = Reply.new(id, "customer-#{id % 37}", ["a#{id % 5}", "b#{id % 3}"], items)
  body = reply.to_json
  context.response.content_type = "application/json"
  context.response.content_length = body.bytesize
  context.response.print body
end
server.bind_tcp "127.0.0.1", port
puts "listening"
STDOUT.flush
server.listen
