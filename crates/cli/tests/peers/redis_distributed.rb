# redis-rb's Redis::Distributed (Debian's ruby-redis) as the peer of
# ringwise's `redis-rb` placement, for crates/cli/tests/compat/clients.rs.
#
#   ruby redis_distributed.rb set   URL...  < keys   # SET each key to itself
#   ruby redis_distributed.rb route URL...  < keys   # prints node_for(key).id
#
# URLs as an application passes them (`redis://127.0.0.1:6379/0`); keys one
# a line (UTF-8). `set` stores through the distributed client, so each key
# lands on the node its ring (and its `{tag}` rule) chose.
require 'redis'
require 'redis/distributed'

mode = ARGV.shift
client = Redis::Distributed.new(ARGV, timeout: 10)
STDIN.binmode
STDIN.each_line do |line|
  key = line.chomp("\n").force_encoding(Encoding::UTF_8)
  case mode
  when 'set'
    client.set(key, key) == 'OK' or abort("SET #{key.inspect} failed")
  when 'route'
    puts client.node_for(key).id
  else
    abort("mode: set or route, not #{mode.inspect}")
  end
end
