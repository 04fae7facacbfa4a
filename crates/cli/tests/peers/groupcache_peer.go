// groupcache's consistenthash (Debian's golang-github-golang-groupcache-dev,
// compiled offline from /usr/share/gocode with Debian's Go) as the peer of
// ringwise's `groupcache` placement, for crates/cli/tests/compat/clients.rs.
//
//	groupcache-peer REPLICAS PEER... < keys
//
// One consistenthash.New(REPLICAS, nil) map (crc32.ChecksumIEEE), the
// peers added in one Add call in the order given, then Get of each key
// (one a line) printed a line.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"

	"github.com/golang/groupcache/consistenthash"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: groupcache-peer REPLICAS PEER... < keys")
		os.Exit(2)
	}
	replicas, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicas:", err)
		os.Exit(2)
	}
	m := consistenthash.New(replicas, nil)
	m.Add(os.Args[2:]...)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		fmt.Fprintln(out, m.Get(in.Text()))
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "reading keys:", err)
		os.Exit(1)
	}
	out.Flush()
}
