# many_stacks.cr -- allocations from a very large number of distinct stacks,
# as a compiler-sized program makes them, and from stacks deeper than any
# frame limit.
#
# Usage: many_stacks paths N OUT     N distinct stacks; OUT gets the truth
#        many_stacks deep DEPTH N    N allocations at a recursion DEPTH deep
#        many_stacks seesaw DEPTH N  N allocations at 0 and N at DEPTH, in turn
#        many_stacks bigframes DEPTH N  N allocations DEPTH, DEPTH-1, DEPTH-2
#                                       frames of ~1 KiB deep, in turn
#
# paths: path i (0 <= i < N) is a recursion whose shape is the base-4 digits
# of i, lowest digit outermost: descend -> d<digit> -> descend -> ... ->
# leaf, one d<k> frame per digit (i = 0 has none). Every caller does work
# after its call, so even --release keeps every frame. Each path is walked
# twice, in two passes over all of them (so that between the two visits of
# a path every other path is visited: a bounded cache of stacks must forget
# it). leaf allocates `reps` blocks of 16 bytes with Pointer(Int32).malloc
# (GC_malloc_atomic, no pointers): 1 + i % 3 in the first pass, 1 in the
# second. OUT gets one line per path: its digits outermost first ("-" for
# none) and the number of blocks allocated under that stack.
#
# deep: `deep_rec` calls itself DEPTH times, then allocates N blocks of 24
# bytes (Pointer(Int64).malloc(3)).
#
# seesaw: one block at deep_rec's depth 0, then one DEPTH deep, N times:
# each stack's walk meets the last one's outer frames many frames apart
# from where that one had them (bpf/unwind_dwarf.h, meet_last_walk).
#
# bigframes: `big_rec` keeps a 1 KiB buffer in its frame (its address
# escapes, and it is read after the call): ~100 frames span ~100 KiB, past
# what a walk copies in one read (bpf/unwind_dwarf.h, copy_last_span).
#
# Output (stdout): PATHS=<N> ALLOCS=<total blocks>, or DEEP=<DEPTH> ALLOCS=<N>

module Sink
  class_property p32 = Pointer(Int32).null
  class_property p64 = Pointer(Int64).null
end

@[NoInline]
def leaf(reps : Int32) : Int32
  reps.times { Sink.p32 = Pointer(Int32).malloc(4) }
  reps
end

@[NoInline]
def descend(path : Int32, left : Int32, reps : Int32) : Int32
  return leaf(reps) &+ 1 if left == 0
  case path & 3
  when 0 then d0(path >> 2, left - 1, reps) &+ 1
  when 1 then d1(path >> 2, left - 1, reps) &+ 1
  when 2 then d2(path >> 2, left - 1, reps) &+ 1
  else        d3(path >> 2, left - 1, reps) &+ 1
  end
end

{% for k in 0..3 %}
  @[NoInline]
  def d{{k}}(path : Int32, left : Int32, reps : Int32) : Int32
    descend(path, left, reps) &+ {{k}}
  end
{% end %}

def digits_of(i : Int32) : Int32
  n = 0
  while i > 0
    n += 1
    i >>= 2
  end
  n
end

@[NoInline]
def deep_rec(left : Int32, n : Int32) : Int32
  if left == 0
    n.times { Sink.p64 = Pointer(Int64).malloc(3) }
    return n
  end
  deep_rec(left - 1, n) &+ 1
end

@[NoInline]
def fill(buf : UInt8*, v : Int32) : Nil
  1024.times { |i| buf[i] = (i &+ v).to_u8! }
end

@[NoInline]
def big_rec(left : Int32) : Int32
  buf = uninitialized StaticArray(UInt8, 1024)
  fill(buf.to_unsafe, left)
  if left == 0
    Sink.p64 = Pointer(Int64).malloc(3)
    return buf[7].to_i32
  end
  big_rec(left - 1) &+ buf[left & 1023]
end

case ARGV[0]?
when "paths"
  n = ARGV[1].to_i
  counts = Array(Int32).new(n, 0)
  2.times do |pass|
    n.times do |i|
      reps = pass == 0 ? 1 + i % 3 : 1
      descend(i, digits_of(i), reps)
      counts[i] += reps
    end
  end
  total = 0_i64
  File.open(ARGV[2], "w") do |f|
    n.times do |i|
      s = String.build do |b|
        j = i
        while j > 0
          b << (j & 3)
          j >>= 2
        end
      end
      f << (s.empty? ? "-" : s) << ' ' << counts[i] << '\n'
      total += counts[i]
    end
  end
  puts "PATHS=#{n} ALLOCS=#{total}"
when "deep"
  depth = ARGV[1].to_i
  n = ARGV[2].to_i
  deep_rec(depth, n)
  puts "DEEP=#{depth} ALLOCS=#{n}"
when "seesaw"
  depth = ARGV[1].to_i
  n = ARGV[2].to_i
  n.times do
    deep_rec(0, 1)
    deep_rec(depth, 1)
  end
  puts "SEESAW=#{depth} ALLOCS=#{2 * n}"
when "bigframes"
  depth = ARGV[1].to_i
  n = ARGV[2].to_i
  n.times { |i| big_rec(depth - i % 3) }
  puts "BIGFRAMES=#{depth} ALLOCS=#{n}"
else
  STDERR.puts "usage: many_stacks paths N OUT | many_stacks deep|seesaw|bigframes DEPTH N"
  exit 2
end
