# callchain.cr -- a known call chain for the stack-unwinding tests.
#
# Usage: callchain [N]     (N defaults to 1000)
#
# Call chain: main (top level) -> chain_a -> chain_b -> chain_c, each marked
# @[NoInline]. Each caller does work after the call returns (adds 1 to the
# result), so even a --release build cannot turn the calls into tail jumps:
# all three frames are on the stack at every allocation made in chain_c.
#
# What it allocates:
#   * chain_c(n) allocates exactly N instances of `Leaf`, a class with four
#     Int64 fields and nothing else (no pointers -> GC_malloc_atomic, size
#     instance_sizeof(Leaf), 40 bytes on x86_64: 4-byte type id, 4 bytes
#     padding, 4 x Int64). The runtime makes no other GC_malloc_atomic call
#     of that size, so the count by size alone is exactly N too. Every one
#     has chain_c, chain_b and chain_a (in that order, innermost first) on
#     its stack; in a --release build, Leaf.new and the runtime's malloc
#     wrappers are inlined into chain_c.
#   * chain_c also allocates the Array holding them (Array object: GC_malloc;
#     buffer sized for N pointers: GC_malloc of N*8 bytes).
#   * The runtime allocates a few blocks at start-up and for printing.
#
# Output (stdout): SIZE=<instance_sizeof(Leaf)>, COUNT=<N>, RESULT=<n+2+sum>
# Exit status: 0.

class Leaf
  @v : Int64
  @w : Int64 = 1_i64
  @t : Int64 = 2_i64
  @u : Int64 = 3_i64

  def initialize(@v : Int64)
  end

  def v : Int64
    @v
  end
end

# Keeps the leaves alive so that the allocations are observably used.
class Keep
  @@leaves = [] of Leaf

  def self.leaves : Array(Leaf)
    @@leaves
  end

  def self.leaves=(leaves : Array(Leaf))
    @@leaves = leaves
  end
end

@[NoInline]
def chain_c(n : Int32) : Int64
  leaves = Array(Leaf).new(n)
  i = 0
  while i < n
    leaves << Leaf.new(i.to_i64)
    i += 1
  end
  Keep.leaves = leaves
  sum = 0_i64
  leaves.each { |l| sum += l.v }
  sum
end

@[NoInline]
def chain_b(n : Int32) : Int64
  chain_c(n) &+ 1
end

@[NoInline]
def chain_a(n : Int32) : Int64
  chain_b(n) &+ 1
end

n = (ARGV[0]? || "1000").to_i
result = chain_a(n)
puts "SIZE=#{instance_sizeof(Leaf)}"
puts "COUNT=#{Keep.leaves.size}"
puts "RESULT=#{result}"
