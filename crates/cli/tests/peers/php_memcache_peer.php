<?php
// pecl memcache (Debian's php-memcache) with memcache.hash_strategy =
// consistent as the peer of ringwise's `php-memcache` placement, for
// crates/cli/tests/compat/clients.rs.
//
//   php php_memcache_peer.php crc32|fnv set   HOST:PORT:WEIGHT... < keys
//   php php_memcache_peer.php crc32|fnv route HOST:PORT:WEIGHT... < keys
//
// `set` stores each key (one a line) with itself as the value, through the
// pool, on the server its consistent strategy chose; `route` prints
// MemcachePool::findServer(key), "host:port".
if (!extension_loaded('memcache')) {
    fwrite(STDERR, "the memcache extension is not loaded (Debian: php-memcache)\n");
    exit(2);
}
$function = $argv[1];
$mode = $argv[2];
ini_set('memcache.hash_strategy', 'consistent');
ini_set('memcache.hash_function', $function);
$pool = new Memcache();
foreach (array_slice($argv, 3) as $server) {
    [$host, $port, $weight] = explode(':', $server);
    if (!$pool->addServer($host, (int) $port, false, (int) $weight, 10)) {
        fwrite(STDERR, "addServer $server failed\n");
        exit(1);
    }
}
while (($line = fgets(STDIN)) !== false) {
    $key = rtrim($line, "\n");
    if ($mode === 'set') {
        if (!$pool->set($key, $key)) {
            fwrite(STDERR, "set " . json_encode($key) . " failed\n");
            exit(1);
        }
    } elseif ($mode === 'route') {
        echo $pool->findServer($key), "\n";
    } else {
        fwrite(STDERR, "mode: set or route\n");
        exit(2);
    }
}
