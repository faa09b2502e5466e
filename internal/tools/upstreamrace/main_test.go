package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gozkRace is the report of go-zookeeper's own race that a CI run met.
const gozkRace = `==================
WARNING: DATA RACE
Read at 0x00c0231d1c80 by goroutine 8356:
  github.com/go-zookeeper/zk.(*Conn).sendSetWatches()
      /root/go/pkg/mod/github.com/go-zookeeper/zk@v1.0.4/conn.go:614 +0x49d
  github.com/go-zookeeper/zk.(*Conn).loop()
      /root/go/pkg/mod/github.com/go-zookeeper/zk@v1.0.4/conn.go:484 +0x54b

Previous write at 0x00c0231d1c80 by goroutine 8369:
  github.com/go-zookeeper/zk.(*Conn).recvLoop()
      /root/go/pkg/mod/github.com/go-zookeeper/zk@v1.0.4/conn.go:849 +0x68c

Goroutine 8356 (running) created at:
  github.com/go-zookeeper/zk.Connect()
      /root/go/pkg/mod/github.com/go-zookeeper/zk@v1.0.4/conn.go:223 +0x8e6
  github.com/zksim/zksim/gozk.Connect()
      /tmp/x/gozk/conn.go:161 +0x887
==================
--- FAIL: TestConformance (73.76s)
`

// oursRace has one access in our code.
const oursRace = `==================
WARNING: DATA RACE
Write at 0x00c000012345 by goroutine 7:
  github.com/zksim/zksim/gozk.(*Conn).onEvent()
      /tmp/x/gozk/session.go:60 +0x1
  github.com/go-zookeeper/zk.(*Conn).sendEvent()
      /root/go/pkg/mod/github.com/go-zookeeper/zk@v1.0.4/conn.go:700 +0x1

Previous read at 0x00c000012345 by goroutine 9:
  github.com/go-zookeeper/zk.(*Conn).recvLoop()
      /root/go/pkg/mod/github.com/go-zookeeper/zk@v1.0.4/conn.go:849 +0x68c
==================
`

func TestScanTellsGoZookeepersRacesFromOurs(t *testing.T) {
	for _, c := range []struct {
		name        string
		log         string
		reports, us int
	}{
		{"go-zookeeper's own", gozkRace, 1, 0},
		{"one of ours", oursRace, 1, 1},
		{"both", gozkRace + oursRace, 2, 1},
		{"none", "ok  \tgithub.com/zksim/zksim/zkmem\t1.0s\n", 0, 0},
		{"cut short", "WARNING: DATA RACE\nRead at 0x1 by goroutine 1:\n  github.com/go-zookeeper/zk.(*Conn).loop()\n", 1, 1},
	} {
		reports, ours, err := scan(strings.NewReader(c.log))
		require.NoError(t, err, c.name)
		require.Equal(t, c.reports, reports, c.name)
		require.Equal(t, c.us, ours, c.name)
	}
}
