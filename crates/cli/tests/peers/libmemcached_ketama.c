/*
 * The libmemcached peer of the ketama compatibility tests: which server
 * libmemcached's own continuum picks for each key.
 *
 * Usage: libmemcached_ketama ketama|spy SERVERS < KEYS
 *        libmemcached_ketama config CONFIG < KEYS
 *
 * SERVERS has one `host port weight` line per server; they are added in
 * that order with memcached_server_add_with_weight. The mode is weighted
 * ketama (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED: MD5 key and point hash,
 * names `host-i`, or `host:port-i` off port 11211) and, for `spy`, then
 * the distribution MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY (names
 * `/host:port-i`), set the way libmemcached's own ketama test sets them.
 *
 * `config` makes the client from the configuration string in the file
 * CONFIG with memcached(3) itself (`memcached(string, length)`), as an
 * application configured by that string would: the import test's peer.
 *
 * KEYS has one key a line (any bytes but the newline). For each key it
 * prints `host:port` of the server memcached_generate_hash and
 * memcached_server_instance_by_position choose, one a line, in order. No
 * memcached server is contacted.
 */
#include <libmemcached/memcached.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int answer(memcached_st *memc);

static void fail(const char *what, memcached_st *memc, memcached_return_t rc) {
  fprintf(stderr, "libmemcached_ketama: %s: %s\n", what,
          memc ? memcached_strerror(memc, rc) : "");
  exit(2);
}

/* The client memcached(3) makes of the configuration string in `path`. */
static memcached_st *configured(const char *path) {
  FILE *file = fopen(path, "r");
  if (file == NULL) {
    perror(path);
    exit(2);
  }
  static char text[1 << 16];
  size_t length = fread(text, 1, sizeof(text) - 1, file);
  if (ferror(file) || !feof(file)) fail("the configuration is unreadable or too long", NULL, MEMCACHED_FAILURE);
  fclose(file);
  char error[1024] = "";
  if (libmemcached_check_configuration(text, length, error, sizeof(error)) != MEMCACHED_SUCCESS) {
    fprintf(stderr, "libmemcached_ketama: configuration refused: %s\n", error);
    exit(3);
  }
  memcached_st *memc = memcached(text, length);
  if (memc == NULL) fail("memcached()", NULL, MEMCACHED_FAILURE);
  return memc;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "ketama") != 0 && strcmp(argv[1], "spy") != 0
                    && strcmp(argv[1], "config") != 0)) {
    fprintf(stderr, "usage: %s ketama|spy SERVERS < KEYS\n       %s config CONFIG < KEYS\n",
            argv[0], argv[0]);
    return 2;
  }
  if (strcmp(argv[1], "config") == 0) return answer(configured(argv[2]));
  memcached_st *memc = memcached_create(NULL);
  if (memc == NULL) fail("memcached_create", NULL, MEMCACHED_FAILURE);
  memcached_return_t rc = memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
  if (rc != MEMCACHED_SUCCESS) fail("KETAMA_WEIGHTED", memc, rc);
  if (strcmp(argv[1], "spy") == 0) {
    rc = memcached_behavior_set_distribution(memc, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY);
    if (rc != MEMCACHED_SUCCESS) fail("CONSISTENT_KETAMA_SPY", memc, rc);
  }

  FILE *servers = fopen(argv[2], "r");
  if (servers == NULL) {
    perror(argv[2]);
    return 2;
  }
  char host[256];
  unsigned port, weight;
  while (fscanf(servers, "%255s %u %u", host, &port, &weight) == 3) {
    rc = memcached_server_add_with_weight(memc, host, (in_port_t)port, weight);
    if (rc != MEMCACHED_SUCCESS) fail(host, memc, rc);
  }
  if (!feof(servers)) fail("a server line is not `host port weight`", NULL, MEMCACHED_FAILURE);
  fclose(servers);
  return answer(memc);
}

/* Prints the server of each key of stdin, one a line. */
static int answer(memcached_st *memc) {
  if (memcached_server_count(memc) == 0) fail("no servers", NULL, MEMCACHED_FAILURE);
  char *line = NULL;
  size_t capacity = 0;
  ssize_t length;
  while ((length = getline(&line, &capacity, stdin)) >= 0) {
    if (length > 0 && line[length - 1] == '\n') length--;
    uint32_t index = memcached_generate_hash(memc, line, (size_t)length);
    const memcached_instance_st *server = memcached_server_instance_by_position(memc, index);
    printf("%s:%u\n", memcached_server_name(server), (unsigned)memcached_server_port(server));
  }
  free(line);
  memcached_free(memc);
  return ferror(stdout) || fflush(stdout) != 0 ? 1 : 0;
}
