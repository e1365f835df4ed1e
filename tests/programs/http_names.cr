# tests/programs/http_names.cr: a small JSON API built --release
# (test_names.sh), whose handler builds an Array(Item), an Array(String) and
# a Hash(String, Int32) on every request, so that their inlined
# constructors and growth must be named apart, as Crystal names them.
# Listens on 127.0.0.1:PORT (ARGV[0]) and prints "listening" when ready.
require "http/server"
require "json"

class Item
  include JSON::Serializable
  getter id : Int32
  getter name : String
  getter email : String

  def initialize(@id : Int32, @name : String, @email : String)
  end
end

def handle(context, n)
  items = Array(Item).new
  names = [] of String
  counts = Hash(String, Int32).new
  (1 + n % 8).times do |i|
    item = Item.new(id: i, name: "name-#{n}-#{i}", email: "u#{i}@example.com")
    items << item
    names << item.name
    counts[item.email] = i
  end
  body = {items: items, names: names, counts: counts}.to_json
  context.response.content_type = "application/json"
  context.response.print body
end

port = (ARGV[0]? || "8088").to_i
served = 0
server = HTTP::Server.new do |context|
  served += 1
  handle(context, served)
end
server.bind_tcp "127.0.0.1", port
puts "listening"
STDOUT.flush
server.listen
