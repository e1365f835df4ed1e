# Heap snapshot test: a known object graph. A constant holds a registry of
# N nodes, each holding M leaves; as many leaves again are garbage. Prints
# the type ids and sizes, then keeps running (ARGV[2] seconds) so that a
# snapshot can be taken with --pid, and says it is still alive at the end.
class Leaf
  def initialize(@v : Int64)
  end
end

class Node
  getter leaves : Array(Leaf)

  def initialize(m : Int32)
    @leaves = Array(Leaf).new(m)
    m.times { |i| @leaves << Leaf.new(i.to_i64) }
  end
end

class Registry
  getter nodes = [] of Node
end

REG = Registry.new

n = (ARGV[0]? || "100").to_i
m = (ARGV[1]? || "10").to_i
n.times { REG.nodes << Node.new(m) }
(n * m).times { |i| Leaf.new(i.to_i64) }
GC.collect
puts "TYPE Leaf #{Leaf.crystal_instance_type_id} #{instance_sizeof(Leaf)}"
puts "TYPE Node #{Node.crystal_instance_type_id} #{instance_sizeof(Node)}"
puts "TYPE Registry #{Registry.crystal_instance_type_id} #{instance_sizeof(Registry)}"
puts "READY #{n} #{m}"
STDOUT.flush
sleep (ARGV[2]? || "5").to_f.seconds
puts "ALIVE #{REG.nodes.size} #{REG.nodes.sum { |x| x.leaves.size }}"
