# Heap snapshot test: a known object graph. A constant holds a registry of
# N nodes, each holding M leaves; as many leaves again are garbage; F
# fibers (ARGV[3]) each hold 10 FiberLeafs in a local variable only, and
# wait (built -Dpreview_mt, on the threads CRYSTAL_WORKERS starts). Prints
# how many fibers the runtime has (FIBERS n). Prints the type ids and sizes, then keeps running (ARGV[2] seconds)
# so that a snapshot can be taken with --pid, and says it is still alive
# at the end.
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

class FiberLeaf
  def initialize(@v : Int64)
  end
end

class RootedThing
  def initialize(@v : Int64)
  end
end

REG = Registry.new

# The graph is built in frames that are gone by the snapshot: the
# collector is conservative, and a stale word on the main stack would keep
# (and dominate) a part of it.
@[NoInline]
def fill(n, m)
  n.times { REG.nodes << Node.new(m) }
  (n * m).times { |i| Leaf.new(i.to_i64) }
end

@[NoInline]
def start_holders(count, wake, done)
  count.times do
    spawn do
      held = Array(FiberLeaf).new(10) { |i| FiberLeaf.new(i.to_i64) }
      wake.receive
      done.send held.size
    end
  end
end

# ARGV[4] == "register": one object held only by malloc'd memory that is
# registered with the collector (GC_add_roots), as a C library may do.
@[NoInline]
def register_root
  buf = LibC.malloc(64).as(Pointer(Void*))
  buf.value = RootedThing.new(7).as(Void*)
  LibGC.add_roots(buf.as(Void*), (buf + 1).as(Void*))
end

n = (ARGV[0]? || "100").to_i
m = (ARGV[1]? || "10").to_i
fill(n, m)
wake = Channel(Nil).new
done = Channel(Int32).new
start_holders((ARGV[3]? || "0").to_i, wake, done)
register_root if ARGV[4]? == "register"
sleep 0.05.seconds # the fibers run, then wait
GC.collect
puts "TYPE Leaf #{Leaf.crystal_instance_type_id} #{instance_sizeof(Leaf)}"
puts "TYPE Node #{Node.crystal_instance_type_id} #{instance_sizeof(Node)}"
puts "TYPE Registry #{Registry.crystal_instance_type_id} #{instance_sizeof(Registry)}"
# the runtime's own count of its fibers, as the collector walks them
fibers = 0
Fiber.unsafe_each { fibers += 1 }
puts "FIBERS #{fibers}"
puts "READY #{n} #{m}"
STDOUT.flush
sleep (ARGV[2]? || "5").to_f.seconds
fiber_leaves = (ARGV[3]? || "0").to_i.times.sum { wake.send nil; done.receive }
puts "ALIVE #{REG.nodes.size} #{REG.nodes.sum { |x| x.leaves.size }} #{fiber_leaves}"
