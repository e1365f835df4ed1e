# deep_stacks.cr -- a compiler-sized allocation profile: deep recursion whose
# path follows the data, ~100 frames per stack, a million distinct stacks,
# millions of allocations (issue 19: Debian's crystal type-checking a small
# file makes 3.7M allocations from 1.12M distinct stacks, most 100-127
# frames deep).
#
# Usage: deep_stacks PATHS DEPTH VISITS [OUT]
#
# Path p (0 <= p < PATHS) is a recursion DEPTH levels deep through four
# functions r0..r3: at each level the function called is chosen by one
# base-4 digit of p, the digits spread evenly over the levels (like a
# visitor descending an AST: siblings share every frame down to the node
# where they part, then differ in the last few levels). Every caller does
# work after its call, so --release keeps every frame. Visits go through
# the paths in a scrambled order (p = i * 0x9E3779B1 mod PATHS for odd
# multipliers, i.e. consecutive visits share little but the top), VISITS
# passes. At the end of each path `leaf` allocates one Node (GC_malloc) and
# `buf` one 16-byte buffer (GC_malloc_atomic): two distinct stacks per
# path, 2 * PATHS distinct stacks and 2 * PATHS * VISITS events in all.
#
# OUT gets one line per path: its choices outermost first as digits 0-3
# and the allocations under each of its two stacks ("D... nodes bufs").
# Output (stdout): PATHS=<n> DEPTH=<d> ALLOCS=<total> elapsed_ms=<work>
#
# DEEP_SHAPE=compiler shapes the stacks as Debian's crystal compiler's
# (bench/RESULTS.md, issue 38): frames of ~200 bytes (b0..b3, each with a
# 160-byte array the compiler must keep in the frame), so that a stack of
# ~100 frames spans 5 pages; and consecutive allocations sharing all but
# their deepest frames (paths visited in order, their lowest digit chosen
# deepest), so that a walk reuses most of the last one.

class Node
  def initialize(@p : Int32)
  end
end

module Sink
  class_property node : Node? = nil
  class_property buf = Pointer(Int32).null
end

@[NoInline]
def buf(p : Int32) : Int32
  Sink.buf = Pointer(Int32).malloc(4)
  p & 1
end

@[NoInline]
def leaf(p : Int32) : Int32
  Sink.node = Node.new(p)
  buf(p) &+ 1
end

COMPILER_SHAPE = ENV["DEEP_SHAPE"]? == "compiler"

# Digit of p chosen at level: NDIGITS digits spread over DEPTH levels; the
# level within a digit's run shifts the choice so runs are not one function.
# The compiler's shape chooses the lowest digit deepest.
@[AlwaysInline]
def choice(p : Int32, level : Int32, depth : Int32, ndigits : Int32) : Int32
  d = (level.to_i64 * ndigits // depth).to_i32
  d = ndigits - 1 - d if COMPILER_SHAPE
  ((p >> (2 * d)) &+ level) & 3
end

# Keeps a frame's array in memory: it escapes here.
@[NoInline]
def touch(pad : Int32*, level : Int32) : Nil
  pad[level % 40] = level
end

{% for k in 0..3 %}
  @[NoInline]
  def r{{k}}(p : Int32, level : Int32, depth : Int32, ndigits : Int32) : Int32
    return leaf(p) &+ {{k + 1}} if level == depth
    case choice(p, level, depth, ndigits)
    when 0 then r0(p, level &+ 1, depth, ndigits) &+ {{k + 1}}
    when 1 then r1(p, level &+ 1, depth, ndigits) &+ {{k + 1}}
    when 2 then r2(p, level &+ 1, depth, ndigits) &+ {{k + 1}}
    else        r3(p, level &+ 1, depth, ndigits) &+ {{k + 1}}
    end
  end
{% end %}

{% for k in 0..3 %}
  @[NoInline]
  def b{{k}}(p : Int32, level : Int32, depth : Int32, ndigits : Int32) : Int32
    return leaf(p) &+ {{k + 1}} if level == depth
    pad = StaticArray(Int32, 40).new(p)
    touch(pointerof(pad).as(Int32*), level)
    r = case choice(p, level, depth, ndigits)
        when 0 then b0(p, level &+ 1, depth, ndigits)
        when 1 then b1(p, level &+ 1, depth, ndigits)
        when 2 then b2(p, level &+ 1, depth, ndigits)
        else        b3(p, level &+ 1, depth, ndigits)
        end
    r &+ pad[(level &+ {{k}}) % 40] &+ {{k + 1}}
  end
{% end %}

paths = (ARGV[0]? || "524288").to_i
depth = (ARGV[1]? || "100").to_i
visits = (ARGV[2]? || "2").to_i
if paths < 1 || depth < 1 || visits < 1
  STDERR.puts "usage: deep_stacks PATHS DEPTH VISITS [OUT]"
  exit 2
end
ndigits = 1
while ndigits < 15 && (1 << (2 * ndigits)) < paths
  ndigits += 1
end

t0 = Time.monotonic
sum = 0
visits.times do
  paths.times do |i|
    if COMPILER_SHAPE
      sum &+= b0(i, 0, depth, ndigits)
    else
      p = ((i.to_i64 * 0x9E3779B1_i64) % paths).to_i32
      sum &+= r0(p, 0, depth, ndigits)
    end
  end
end
elapsed = (Time.monotonic - t0).total_milliseconds.to_i64

if truth = ARGV[3]?
  File.open(truth, "w") do |f|
    paths.times do |p|
      s = String.build do |b|
        depth.times { |level| b << choice(p, level, depth, ndigits) }
      end
      f << s << ' ' << visits << ' ' << visits << '\n'
    end
  end
end
puts "PATHS=#{paths} DEPTH=#{depth} ALLOCS=#{2_i64 * paths * visits} elapsed_ms=#{elapsed} sum=#{sum}"
