package history_test

import (
	"context"
	"fmt"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/history"
	"github.com/zksim/zksim/zkmem"
)

// Record three clients running a random workload on an in-memory server,
// and check the history.
func Example() {
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	var conns []zksim.Conn
	for range 3 {
		c, err := srv.Connect()
		if err != nil {
			panic(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	rec := history.NewRecorder(nil)
	wl := history.Workload{Root: "/example", Paths: 2, Ops: 30, Seed: 1}
	if err := wl.Run(context.Background(), rec, conns); err != nil {
		panic(err)
	}
	ops := rec.History()
	fmt.Println(len(ops), "operations:", history.Check(ops))
	// Output:
	// 90 operations: <nil>
}

// A history written by hand: client 1 reads version 1 of /k, then version
// 0 again.
func ExampleCheck() {
	rec := history.NewRecorder(nil)
	do := func(client int, kind history.Kind, data string, res history.Result) {
		id := rec.Invoke(history.Op{Client: client, Kind: kind, Path: "/k", Data: []byte(data), Version: -1})
		rec.Return(id, res)
	}
	v0 := &zksim.Stat{Czxid: 2, Mzxid: 2, Pzxid: 2}
	v1 := &zksim.Stat{Czxid: 2, Mzxid: 3, Pzxid: 2, Version: 1}
	do(0, history.Create, "a", history.Result{})
	do(0, history.Set, "b", history.Result{Stat: v1})
	do(1, history.Get, "", history.Result{Data: []byte("b"), Stat: v1})
	do(1, history.Get, "", history.Result{Data: []byte("a"), Stat: v0})
	fmt.Println(history.Check(rec.History()))
	// Output:
	// history of 4 operations breaks ZooKeeper's guarantees (1 violation)
	// 1. monotonic reads, client 1: read /k at version 0 (czxid 0x2, mzxid 0x2), a state replaced by zxid 0x3, after the client had seen zxid 0x3: the read goes back in time
	// 	#3 c1 get /k -> "a" {czxid:0x2 mzxid:0x2 pzxid:0x2 version:0} [15, 16]
	// 	#2 c1 get /k -> "b" {czxid:0x2 mzxid:0x3 pzxid:0x2 version:1} [11, 12]
	// 	#1 c0 set /k "b" v-1 -> {czxid:0x2 mzxid:0x3 pzxid:0x2 version:1} [7, 8]
}
