# demo.cr -- the program `make demo` traces (scripts/demo.sh).
#
# A small "order processing" workload: orders arrive as JSON strings, are
# parsed into objects (JSON::Serializable), priced, aggregated per customer
# and per product, and summarized in a text report. It allocates the way
# real Crystal programs do: strings (GC_malloc_atomic), arrays and hashes
# (GC_malloc, GC_realloc as they grow), small objects with and without
# pointers. The default 10000 orders take ~0.35 s untraced (debug build)
# and make ~650,000 GC calls.
#
# Usage: demo [ORDERS]     (default 10000)
require "json"

class Item
  include JSON::Serializable

  getter sku : String
  getter quantity : Int32
  getter unit_price : Float64

  def initialize(@sku, @quantity, @unit_price)
  end

  def total : Float64
    quantity * unit_price
  end
end

class Order
  include JSON::Serializable

  getter id : Int64
  getter customer : String
  getter items : Array(Item)
  getter tags : Array(String)

  def initialize(@id, @customer, @items, @tags)
  end

  def total : Float64
    items.sum(&.total)
  end
end

# A price that holds no pointers: allocated with GC_malloc_atomic.
class Money
  getter cents : Int64

  def initialize(@cents : Int64)
  end

  def +(other : Money) : Money
    Money.new(cents + other.cents)
  end

  def to_s(io : IO) : Nil
    io << (cents // 100) << '.' << (cents % 100).to_s.rjust(2, '0')
  end
end

CUSTOMERS = %w(acme globex initech umbrella hooli stark wayne tyrell)
SKUS      = (1..40).map { |i| "SKU-#{i.to_s.rjust(4, '0')}" }
TAGS      = %w(express gift fragile bulk priority)

# The "network": orders serialized to JSON strings, as a service would
# receive them.
def incoming_order(id : Int64, rng : Random) : String
  items = Array.new(rng.rand(1..6)) do
    Item.new(SKUS.sample(rng), rng.rand(1..9), rng.rand(1.0..120.0).round(2))
  end
  tags = TAGS.sample(rng.rand(0..2), rng)
  Order.new(id, CUSTOMERS.sample(rng), items, tags).to_json
end

class Ledger
  getter per_customer = Hash(String, Money).new { Money.new(0) }
  getter per_sku = Hash(String, Int32).new(0)
  getter tagged = Hash(String, Array(Int64)).new { |h, k| h[k] = [] of Int64 }
  getter orders = 0

  def record(order : Order) : Nil
    @orders += 1
    per_customer[order.customer] += Money.new((order.total * 100).round.to_i64)
    order.items.each { |item| per_sku[item.sku] += item.quantity }
    order.tags.each { |tag| tagged[tag] << order.id }
  end

  def report : String
    String.build do |io|
      io << "orders: " << orders << '\n'
      per_customer.to_a.sort_by { |_, m| -m.cents }.each do |customer, money|
        io << "  " << customer.ljust(10) << ' ' << money << '\n'
      end
      top = per_sku.to_a.sort_by { |_, q| -q }.first(3)
      io << "top products: " << top.map { |sku, q| "#{sku} (#{q})" }.join(", ") << '\n'
      tagged.each { |tag, ids| io << "  #" << tag << ": " << ids.size << " orders\n" }
    end
  end
end

count = (ARGV[0]? || "10000").to_i
rng = Random.new(42)
ledger = Ledger.new
count.times do |i|
  json = incoming_order(i.to_i64, rng)
  ledger.record(Order.from_json(json))
  # An intermediate report now and then, like a periodic status line.
  ledger.report if i % 1000 == 999
end
puts ledger.report
