module github.com/zksim/zksim

go 1.26.8

require (
	github.com/go-zookeeper/zk v1.0.4 // indirect
	github.com/google/btree v1.1.3 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
