# exit_status.cr -- a target that ends with a chosen non-zero status.
#
# Usage: exit_status [STATUS|sigterm|sigkill]
#   STATUS   exit with this code (default 7)
#   sigterm  kill itself with SIGTERM (a waitpid-style decoder reports 128+15)
#   sigkill  kill itself with SIGKILL (128+9)
#
# What it allocates: `make_blobs` (@[NoInline]) allocates exactly 10 Bytes
# buffers of 100 bytes (Bytes.new -> GC_malloc_atomic of 100 bytes), then the
# runtime's own few blocks for start-up and printing.
#
# Output (stdout): BLOBS=10, then the program ends as requested.

@[NoInline]
def make_blobs : Array(Bytes)
  blobs = [] of Bytes
  10.times { blobs << Bytes.new(100) }
  blobs
end

blobs = make_blobs
puts "BLOBS=#{blobs.size}"
STDOUT.flush

case arg = ARGV[0]? || "7"
when "sigterm"
  Process.signal(Signal::TERM, Process.pid)
  sleep 5
  exit 99
when "sigkill"
  Process.signal(Signal::KILL, Process.pid)
  sleep 5
  exit 99
else
  exit arg.to_i
end
