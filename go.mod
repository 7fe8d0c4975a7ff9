module github.com/rockstream/rockstream

go 1.26.8

require (
	github.com/cockroachdb/apd/v3 v3.2.3
	github.com/cockroachdb/datadriven v1.0.3
	github.com/jackc/pgx/v5 v5.13.0
	github.com/pganalyze/pg_query_go/v6 v6.2.5
	github.com/spf13/cobra v1.10.2
	github.com/tidwall/btree v1.8.2
	golang.org/x/text v0.41.0
	google.golang.org/protobuf v1.33.0
	pgregory.net/rapid v1.3.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
