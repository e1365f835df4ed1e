# bench/workloads/json_parse.cr: a realistic workload for bench/overhead:
# parse a JSON document of orders PASSES times (ARGV[0], default 20) into
# typed objects and aggregate them. Prints the parsing phase's wall time as
# elapsed_ms=... (building the document is excluded) and a checksum.
require "json"

struct Line
  include JSON::Serializable
  getter sku : String
  getter qty : Int32
  getter price : Float64
end

class Order
  include JSON::Serializable
  getter id : Int64
  getter customer : String
  getter tags : Array(String)
  getter lines : Array(Line)
end

doc = String.build do |io|
  io << "["
  500.times do |i|
    io << "," if i > 0
    io << %({"id":#{i},"customer":"customer-#{i % 37}","tags":["a#{i % 5}","b#{i % 3}"],"lines":[)
    (1 + i % 4).times do |k|
      io << "," if k > 0
      io << %({"sku":"sku-#{(i * 7 + k) % 101}","qty":#{1 + k},"price":#{(i % 13) + 0.25 * k}})
    end
    io << "]}"
  end
  io << "]"
end

passes = (ARGV[0]? || "20").to_i
t0 = Time.monotonic
total = 0.0
passes.times do
  orders = Array(Order).from_json(doc)
  by_customer = Hash(String, Float64).new(0.0)
  orders.each do |o|
    o.lines.each { |l| by_customer[o.customer] += l.qty * l.price }
  end
  total += by_customer.values.sum
end
puts "elapsed_ms=#{(Time.monotonic - t0).total_milliseconds}"
puts "checksum=#{total.round(2)}"
