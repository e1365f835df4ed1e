# alloc_known.cr -- a known number of GC_malloc_atomic calls of a known size.
#
# Usage: alloc_known [N]     (N defaults to 100000)
#
# What it allocates:
#   * `make_points(n)` (marked @[NoInline]) allocates exactly N instances of
#     `Point`, a class whose only field is an Int32. An instance holds no
#     pointers, so Crystal allocates it with GC_malloc_atomic, and its size is
#     `instance_sizeof(Point)` (8 bytes on x86_64: 4-byte type id + Int32).
#     Every one of these N calls has `make_points` on its stack.
#   * `make_points` also allocates the Array that holds the points: the Array
#     object itself (GC_malloc, instance_sizeof(Array(Point)) bytes) and its
#     buffer, sized for N pointers up front (GC_malloc of N*8 bytes, or
#     GC_malloc_atomic/realloc if Crystal's Array implementation changes);
#     none of these has size instance_sizeof(Point) unless N == 1.
#   * The Crystal runtime allocates a few more blocks at start-up and for
#     printing to stdout; none of them has `make_points` on its stack, and
#     (Crystal 1.6, checked with gdb) none is a GC_malloc_atomic of 8 bytes,
#     so the count of GC_malloc_atomic calls of instance_sizeof(Point) bytes
#     is exactly N too. In a --release build, Point.new and the runtime's
#     malloc wrappers are inlined into make_points.
#
# Output (stdout), one per line:
#   SIZE=<instance_sizeof(Point)>
#   COUNT=<N>
#   SUM=<sum of all Point#x, which keeps the points observably used>
#   UID=<real uid it runs as: the invoking user under sudo>
#
# Exit status: 3 (deliberately non-zero, to test the tracer's exit-status
# passthrough).

class Point
  @x : Int32

  def initialize(@x : Int32)
  end

  def x : Int32
    @x
  end
end

@[NoInline]
def make_points(n : Int32) : Array(Point)
  points = Array(Point).new(n)
  i = 0
  while i < n
    points << Point.new(i)
    i += 1
  end
  points
end

n = (ARGV[0]? || "100000").to_i
points = make_points(n)

sum = 0_i64
points.each { |p| sum += p.x }

puts "SIZE=#{instance_sizeof(Point)}"
puts "COUNT=#{points.size}"
puts "SUM=#{sum}"
puts "UID=#{LibC.getuid}"
STDOUT.flush
exit 3
