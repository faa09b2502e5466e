module github.com/zksim/zksim

go 1.26.8

require (
	github.com/go-zookeeper/zk v1.0.4 // indirect
	github.com/google/btree v1.1.3 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
