# faults.cr -- targets for the fault tests (tests/e2e/test_faults.sh).
# Built with -Dpreview_mt (multi-threaded scheduler; CRYSTAL_WORKERS sets the
# number of worker threads, default 4), debug build only.
#
# Usage:
#   faults threads F K   spawn F fibers, spread round-robin over the worker
#                        threads; each calls `thread_alloc(K)`, which
#                        allocates exactly K `Blob`s (three Int64 fields, no
#                        pointers -> GC_malloc_atomic of instance_sizeof(Blob),
#                        32 bytes on x86_64) without yielding. Waits for all.
#                        Prints SIZE=, COUNT=<F*K>, TIDS=<distinct kernel
#                        thread ids that ran thread_alloc, comma-separated>,
#                        PER_TID=<tid:Blobs allocated by it, comma-separated>
#                        (a fiber never changes threads under preview_mt).
#   faults fork K        `parent_alloc(K)` (K Blobs), then runs itself as
#                        `faults child K` (fork + exec, waits for it), then
#                        `parent_alloc(K)` again: 2*K Blobs from parent_alloc
#                        in this process. The child allocates K Blobs in
#                        `child_alloc` and prints CHILD_PID=<pid>.
#                        Prints SIZE=, PARENT_PID=, CHILD_STATUS=<exit code>.
#   faults ids           prints UID=, EUID=, GID=, EGID=, GROUPS=<ids,
#                        comma-separated>, HOME=, USER=
# Exit status 0.

lib LibAlys
  fun gettid : Int32
  fun getgroups(size : Int32, list : UInt32*) : Int32
  fun geteuid : UInt32
  fun getgid : UInt32
  fun getegid : UInt32
end

class Blob
  @a : Int64
  @b : Int64 = 1_i64
  @c : Int64 = 2_i64

  def initialize(@a : Int64)
  end

  def a : Int64
    @a
  end
end

# Keeps allocations alive so that they are observably used.
class Keep
  @@all = [] of Array(Blob)
  @@lock = Mutex.new

  def self.add(batch : Array(Blob))
    @@lock.synchronize { @@all << batch }
  end
end

@[NoInline]
def thread_alloc(k : Int32) : Int32
  batch = Array(Blob).new(k)
  i = 0
  while i < k
    batch << Blob.new(i.to_i64)
    i += 1
  end
  Keep.add(batch)
  LibAlys.gettid
end

@[NoInline]
def parent_alloc(k : Int32) : Int32
  batch = Array(Blob).new(k)
  k.times { |i| batch << Blob.new(i.to_i64) }
  Keep.add(batch)
  batch.size
end

@[NoInline]
def child_alloc(k : Int32) : Int32
  batch = Array(Blob).new(k)
  k.times { |i| batch << Blob.new(i.to_i64) }
  Keep.add(batch)
  batch.size
end

case ARGV[0]?
when "threads"
  f = ARGV[1].to_i
  k = ARGV[2].to_i
  done = Channel(Int32).new(f)
  f.times { spawn { done.send(thread_alloc(k)) } }
  per_tid = Hash(Int32, Int32).new(0)
  f.times { per_tid[done.receive] += k }
  puts "SIZE=#{instance_sizeof(Blob)}"
  puts "COUNT=#{f * k}"
  puts "TIDS=#{per_tid.keys.sort.join(",")}"
  puts "PER_TID=#{per_tid.keys.sort.map { |t| "#{t}:#{per_tid[t]}" }.join(",")}"
when "fork"
  k = ARGV[1].to_i
  parent_alloc(k)
  status = Process.run(Process.executable_path.not_nil!, ["child", k.to_s],
    output: Process::Redirect::Inherit, error: Process::Redirect::Inherit)
  parent_alloc(k)
  puts "SIZE=#{instance_sizeof(Blob)}"
  puts "PARENT_PID=#{Process.pid}"
  puts "CHILD_STATUS=#{status.exit_code}"
when "child"
  child_alloc(ARGV[1].to_i)
  puts "CHILD_PID=#{Process.pid}"
when "ids"
  groups = Array(UInt32).new(256, 0_u32)
  n = LibAlys.getgroups(256, groups.to_unsafe)
  puts "UID=#{LibC.getuid}"
  puts "EUID=#{LibAlys.geteuid}"
  puts "GID=#{LibAlys.getgid}"
  puts "EGID=#{LibAlys.getegid}"
  puts "GROUPS=#{groups[0, n < 0 ? 0 : n].join(",")}"
  puts "HOME=#{ENV["HOME"]?}"
  puts "USER=#{ENV["USER"]?}"
else
  STDERR.puts "usage: faults threads F K | fork K | ids"
  exit 2
end
STDOUT.flush
