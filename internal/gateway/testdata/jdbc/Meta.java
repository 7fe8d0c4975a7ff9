import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;

// Meta prints what pgJDBC's DatabaseMetaData reports about the public
// schema: getTables and getColumns of every table, view and
// materialized view. Arguments: host:port, database.
public class Meta {
  static void dump(ResultSet rs, String... cols) throws Exception {
    while (rs.next()) {
      StringBuilder b = new StringBuilder();
      for (String c : cols) {
        b.append(c).append('=').append(rs.getString(c)).append(' ');
      }
      System.out.println(b.toString().trim());
    }
  }

  public static void main(String[] args) throws Exception {
    String url = "jdbc:postgresql://" + args[0] + "/" + args[1] + "?sslmode=disable";
    try (Connection c = DriverManager.getConnection(url, "postgres", "")) {
      DatabaseMetaData md = c.getMetaData();
      dump(md.getTables(null, "public", "%", new String[] {"TABLE", "VIEW", "MATERIALIZED VIEW"}),
          "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS");
      dump(md.getColumns(null, "public", "%", "%"),
          "TABLE_NAME", "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "DECIMAL_DIGITS",
          "NULLABLE", "COLUMN_DEF", "ORDINAL_POSITION", "IS_NULLABLE", "IS_AUTOINCREMENT");
    }
  }
}
