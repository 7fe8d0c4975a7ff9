// Package parquettest checks RockLake against the Parquet files a lake
// points at, with DuckDB itself (the Go DuckDB module, which bundles
// Parquet but not DuckLake) writing and reading them. It holds only a
// test: the cgo dependency on DuckDB stays out of every other build.
//
// Invariant the test proves: the data files and statistics registered
// through DuckLake-shaped commit batches are what a DuckLake snapshot
// load reads back from RockLake, and they describe the files exactly
// (paths resolve under the data path, record counts, sizes, footer
// sizes, per-column value and null counts, min and max).
package parquettest
