# Dalli (Debian's ruby-dalli) as the peer of ringwise's `dalli` placement,
# for crates/cli/tests/compat/clients.rs.
#
#   ruby dalli_peer.rb set   HOST:PORT:WEIGHT...  < keys   # stores each key (value: the key)
#   ruby dalli_peer.rb route HOST:PORT:WEIGHT...  < keys   # prints Dalli's server per key
#
# Keys come one a line (UTF-8, no newline in them). `set` goes through
# Dalli::Client#set with `raw: true`, so memcached holds the key's bytes
# under flags 0 on the server Dalli's ring chose; `route` asks the
# client's ring (`server_for_key`, which connects to the server it
# names) and prints that server's `name`.
require 'dalli'

mode = ARGV.shift
servers = ARGV
client = Dalli::Client.new(servers, failover: false, socket_timeout: 10)
STDOUT.sync = false
STDIN.binmode
STDIN.each_line do |line|
  key = line.chomp("\n").force_encoding(Encoding::UTF_8)
  case mode
  when 'set'
    client.set(key, key, 0, raw: true) or abort("set #{key.inspect} failed")
  when 'route'
    puts client.send(:ring).server_for_key(key).name
  else
    abort("mode: set or route, not #{mode.inspect}")
  end
end
client.close
