# sleeper.cr -- a long-running target for `alys-bpf --pid` attach tests.
#
# Usage: sleeper [SECONDS [HEARTBEAT_FILE [K]]]
#   SECONDS         run this long, then exit 0; 0 or absent = until killed
#   HEARTBEAT_FILE  where to append the once-per-second heartbeat lines;
#                   "-" or absent = stdout
#   K               Points allocated per tick (default 100)
#
# What it allocates:
#   * Every 0.05 s, `tick_alloc(k)` (marked @[NoInline]) allocates exactly K
#     instances of `Point` (one Int32 field, no pointers -> GC_malloc_atomic,
#     size instance_sizeof(Point), 8 bytes on x86_64). All K calls have
#     `tick_alloc` on their stack. It also allocates the Array holding them
#     (Array object: GC_malloc; buffer sized for K pointers: GC_malloc of K*8).
#   * Start-up, sleeping (event loop) and heartbeat printing allocate a few
#     more blocks; none of them has `tick_alloc` on its stack.
#
# Output:
#   stdout, first line:  READY <pid>
#   heartbeat, once per second:
#     HEARTBEAT <seconds> ticks=<t> points=<p> unix_ms=<u> bytes=<b>
#     where t = ticks done so far, p = Points allocated so far (t * K),
#     u the wall clock then and b the bytes tick_alloc asked for so far: its
#     own count, t * (K Points, the Array's buffer of K references, the
#     Array object).
#   Nothing else is printed. Exits 0 after SECONDS, or dies with the signal
#   it is killed with.

class Point
  @x : Int32

  def initialize(@x : Int32)
  end

  def x : Int32
    @x
  end
end

# Keeps the latest batch alive so that the allocations are observably used.
class Keep
  @@last_batch = [] of Point

  def self.last_batch=(batch : Array(Point))
    @@last_batch = batch
  end
end

@[NoInline]
def tick_alloc(k : Int32) : Int32
  batch = Array(Point).new(k)
  i = 0
  while i < k
    batch << Point.new(i)
    i += 1
  end
  Keep.last_batch = batch
  batch.size
end

seconds = (ARGV[0]? || "0").to_f
hb_path = ARGV[1]? || "-"
k = (ARGV[2]? || "100").to_i

hb = hb_path == "-" ? STDOUT : File.open(hb_path, "a")

STDOUT.puts "READY #{Process.pid}"
STDOUT.flush

tick_bytes = k.to_i64 * (instance_sizeof(Point) + sizeof(Point)) + instance_sizeof(Array(Point))
start = Time.monotonic
next_beat = 1
ticks = 0_i64
points = 0_i64

loop do
  sleep 0.05
  points += tick_alloc(k)
  ticks += 1
  elapsed = (Time.monotonic - start).total_seconds
  while elapsed >= next_beat
    hb.puts "HEARTBEAT #{next_beat} ticks=#{ticks} points=#{points} " \
            "unix_ms=#{Time.utc.to_unix_ms} bytes=#{ticks * tick_bytes}"
    hb.flush
    next_beat += 1
  end
  break if seconds > 0 && elapsed >= seconds
end

hb.close unless hb == STDOUT
exit 0
