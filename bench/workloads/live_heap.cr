# live_heap.cr -- a program with a real live heap that times its own
# collections (issue 38): OBJECTS small objects kept alive, each holding an
# Array(Int32) of 3 and a String (~60 MB with 300000: about 1.07M blocks),
# then COLLECTS explicit GC.collect calls, each timed with Time.monotonic.
#
# Usage: live_heap [OBJECTS [COLLECTS]]   (defaults 300000 20)
# Prints one line:
#   collects=<n> total_ms=<sum of the pauses> longest_ms=<the longest> kept=<objects>
class Holder
  def initialize(@numbers : Array(Int32), @label : String)
  end
end

objects = (ARGV[0]? || "300000").to_i
collects = (ARGV[1]? || "20").to_i
keep = Array(Holder).new(objects)
objects.times { |i| keep << Holder.new([i, i + 1, i + 2], "holder #{i}") }
total = Time::Span.zero
longest = Time::Span.zero
collects.times do
  t = Time.monotonic
  GC.collect
  d = Time.monotonic - t
  total += d
  longest = d if d > longest
end
puts "collects=#{collects} total_ms=#{total.total_milliseconds.round(1)} " \
     "longest_ms=#{longest.total_milliseconds.round(1)} kept=#{keep.size}"
