# gc_pauses.cr -- collections whose truth is known (issue 40).
#
#   gc_pauses explicit COLLECTS OBJECTS
#     keeps OBJECTS small objects alive (each an Array(Int32) of 3 and a
#     String), then makes COLLECTS GC.collect calls, each timed with
#     Time.monotonic; prints "collects=<n> pause_us=<d1>,<d2>,..." (each
#     call's microseconds, in order).
#   gc_pauses explicit-after FILE COLLECTS OBJECTS
#     the same, once FILE exists: prints "READY" (the heap built) and waits
#     for it, so that a tracer can attach (--pid) first.
#   gc_pauses sites MIB
#     allocates MIB MiB of garbage from two sites, 90% of the calls (and
#     bytes) from big_site and 10% from small_site, buffers of one size (one
#     free list), the site of each call drawn at random (a fixed pattern
#     could fall in step with the free list's refills): the allocation that
#     finds the list empty and collects is big_site's 9 times in 10.
class Holder
  def initialize(@numbers : Array(Int32), @label : String)
  end
end

@[NoInline]
def big_site(sink : Array(Bytes))
  sink[0] = Bytes.new(100)
end

@[NoInline]
def small_site(sink : Array(Bytes))
  sink[1] = Bytes.new(100)
end

case ARGV[0]?
when "explicit", "explicit-after"
  after = ARGV[0] == "explicit-after" ? ARGV.delete_at(1) : nil
  collects = ARGV[1].to_i
  objects = ARGV[2].to_i
  keep = Array(Holder).new(objects)
  objects.times { |i| keep << Holder.new([i, i + 1, i + 2], "holder #{i}") }
  if after
    puts "READY"
    STDOUT.flush
    until File.exists?(after)
      sleep 0.01
    end
  end
  pauses = [] of Int64
  collects.times do
    t = Time.monotonic
    GC.collect
    pauses << (Time.monotonic - t).total_microseconds.to_i64
  end
  puts "collects=#{collects} pause_us=#{pauses.join(",")} kept=#{keep.size}"
when "sites"
  bytes = ARGV[1].to_i64 * 1024 * 1024
  sink = [Bytes.empty, Bytes.empty]
  done = 0_i64
  seed = 12345_u32
  while done < bytes
    seed = seed &* 1103515245_u32 &+ 12345_u32
    if (seed >> 16) % 10 == 0
      small_site(sink)
    else
      big_site(sink)
    end
    done += 100
  end
  puts "allocated=#{done}"
else
  STDERR.puts "usage: gc_pauses explicit COLLECTS OBJECTS | gc_pauses sites MIB"
  exit 2
end
