module curlew.local/benchmarks/peers/go-net-http

go 1.19
