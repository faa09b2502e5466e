module github.com/zksim/zksim

go 1.26.8
