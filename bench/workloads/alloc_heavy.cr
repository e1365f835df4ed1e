# bench/workloads/alloc_heavy.cr: allocation-heavy workload for bench/overhead.
# ROUNDS rounds (ARGV[0], default 20000) of: 5 small objects, 2 strings built
# by interpolation, an array grown to 8 elements. Prints the work phase's
# wall time as elapsed_ms=... (start-up excluded) and a checksum.

class Node
  def initialize(@id : Int32, @next : Node?); end

  def id
    @id
  end
end

@[NoInline]
def round(i : Int32) : Int32
  head : Node? = nil
  5.times { |k| head = Node.new(i + k, head) }
  s = "item-#{i}"
  t = "#{s}:#{i * 3}"
  a = [] of Int32
  8.times { |k| a << k }
  (head.try(&.id) || 0) + t.size + a.size
end

rounds = (ARGV[0]? || "20000").to_i
t0 = Time.monotonic
sum = 0_i64
rounds.times { |i| sum += round(i) }
puts "elapsed_ms=#{(Time.monotonic - t0).total_milliseconds}"
puts "checksum=#{sum}"
