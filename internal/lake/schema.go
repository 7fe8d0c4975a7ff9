package lake

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// catalogTables is the DuckLake 1.0 catalog: 28 tables, each column
// with its DuckLake type; PK marks the declared primary keys, the only
// constraints besides NOT NULL on ducklake_metadata's key and value.
var catalogTables = []struct{ name, cols string }{
	{"ducklake_metadata", "key VARCHAR NOT NULL, value VARCHAR NOT NULL, scope VARCHAR, scope_id BIGINT"},
	{"ducklake_snapshot", "snapshot_id BIGINT PK, snapshot_time TIMESTAMPTZ, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT"},
	{"ducklake_snapshot_changes", "snapshot_id BIGINT PK, changes_made VARCHAR, author VARCHAR, commit_message VARCHAR, commit_extra_info VARCHAR"},
	{"ducklake_schema", "schema_id BIGINT PK, schema_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN"},
	{"ducklake_table", "table_id BIGINT, table_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN"},
	{"ducklake_view", "view_id BIGINT, view_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, view_name VARCHAR, dialect VARCHAR, sql VARCHAR, column_aliases VARCHAR"},
	{"ducklake_tag", "object_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, key VARCHAR, value VARCHAR"},
	{"ducklake_column_tag", "table_id BIGINT, column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, key VARCHAR, value VARCHAR"},
	{"ducklake_data_file", "data_file_id BIGINT PK, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BOOLEAN, file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR, mapping_id BIGINT, partial_max BIGINT"},
	{"ducklake_file_column_stats", "data_file_id BIGINT, table_id BIGINT, column_id BIGINT, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR"},
	{"ducklake_file_variant_stats", "data_file_id BIGINT, table_id BIGINT, column_id BIGINT, variant_path VARCHAR, shredded_type VARCHAR, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR"},
	{"ducklake_delete_file", "delete_file_id BIGINT PK, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, format VARCHAR, delete_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, encryption_key VARCHAR, partial_max BIGINT"},
	{"ducklake_column", "column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, table_id BIGINT, column_order BIGINT, column_name VARCHAR, column_type VARCHAR, initial_default VARCHAR, default_value VARCHAR, nulls_allowed BOOLEAN, parent_column BIGINT, default_value_type VARCHAR, default_value_dialect VARCHAR"},
	{"ducklake_table_stats", "table_id BIGINT, record_count BIGINT, next_row_id BIGINT, file_size_bytes BIGINT"},
	{"ducklake_table_column_stats", "table_id BIGINT, column_id BIGINT, contains_null BOOLEAN, contains_nan BOOLEAN, min_value VARCHAR, max_value VARCHAR, extra_stats VARCHAR"},
	{"ducklake_partition_info", "partition_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT"},
	{"ducklake_partition_column", "partition_id BIGINT, table_id BIGINT, partition_key_index BIGINT, column_id BIGINT, transform VARCHAR"},
	{"ducklake_file_partition_value", "data_file_id BIGINT, table_id BIGINT, partition_key_index BIGINT, partition_value VARCHAR"},
	{"ducklake_files_scheduled_for_deletion", "data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, schedule_start TIMESTAMPTZ"},
	{"ducklake_inlined_data_tables", "table_id BIGINT, table_name VARCHAR, schema_version BIGINT"},
	{"ducklake_column_mapping", "mapping_id BIGINT, table_id BIGINT, type VARCHAR"},
	{"ducklake_name_mapping", "mapping_id BIGINT, column_id BIGINT, source_name VARCHAR, target_field_id BIGINT, parent_column BIGINT, is_partition BOOLEAN"},
	{"ducklake_schema_versions", "begin_snapshot BIGINT, schema_version BIGINT, table_id BIGINT"},
	{"ducklake_macro", "schema_id BIGINT, macro_id BIGINT, macro_name VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT"},
	{"ducklake_macro_impl", "macro_id BIGINT, impl_id BIGINT, dialect VARCHAR, sql VARCHAR, type VARCHAR"},
	{"ducklake_macro_parameters", "macro_id BIGINT, impl_id BIGINT, column_id BIGINT, parameter_name VARCHAR, parameter_type VARCHAR, default_value VARCHAR, default_value_type VARCHAR"},
	{"ducklake_sort_info", "sort_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT"},
	{"ducklake_sort_expression", "sort_id BIGINT, table_id BIGINT, sort_key_index BIGINT, expression VARCHAR, dialect VARCHAR, sort_direction VARCHAR, null_order VARCHAR"},
}

// CatalogVersion is the DuckLake catalog version RockLake serves.
const CatalogVersion = "1.0"

// CatalogDDL returns the CREATE TABLE statements of the catalog, written
// as DuckDB writes them when it initializes a lake in PostgreSQL.
func CatalogDDL() []string {
	var out []string
	for _, t := range catalogTables {
		var cols []string
		for _, c := range strings.Split(t.cols, ", ") {
			f := strings.Fields(c)
			typ := strings.Join(f[1:], " ")
			typ = strings.ReplaceAll(typ, "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE")
			typ = strings.ReplaceAll(typ, " PK", " PRIMARY KEY")
			cols = append(cols, fmt.Sprintf("%q %s", f[0], typ))
		}
		out = append(out, fmt.Sprintf(`CREATE TABLE "public".%q(%s)`, t.name, strings.Join(cols, ", ")))
	}
	return out
}

// InitialRows returns the statements that fill a new catalog as DuckDB
// does on its first ATTACH: the metadata rows (version, created_by,
// data_path, encrypted), snapshot 0, its change record and schema 0,
// "main".
func InitialRows(dataPath string, now time.Time, schemaUUID string) []string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	ts := now.UTC().Format("2006-01-02 15:04:05.999999") + "+00"
	return []string{
		fmt.Sprintf(`INSERT INTO "public".ducklake_metadata ("key", "value") VALUES ('version', %s), ('created_by', 'RockLake'), ('data_path', %s), ('encrypted', 'false')`,
			q(CatalogVersion), q(dataPath)),
		fmt.Sprintf(`INSERT INTO "public".ducklake_snapshot VALUES (0, %s, 0, 1, 0)`, q(ts)),
		`INSERT INTO "public".ducklake_snapshot_changes VALUES (0, 'created_schema:"main"', NULL, NULL, NULL)`,
		fmt.Sprintf(`INSERT INTO "public".ducklake_schema VALUES (0, %s, 0, NULL, 'main', 'main/', true)`, q(schemaUUID)),
	}
}

// newUUIDv7 returns a time-ordered UUID (RFC 9562 version 7), as DuckDB
// gives new schemas.
func newUUIDv7(now time.Time) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(now.UnixMilli()))
	copy(b[:6], ms[2:])
	b[6] = b[6]&0x0F | 0x70
	b[8] = b[8]&0x3F | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
