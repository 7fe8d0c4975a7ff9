// The client scenario with pgJDBC, including DatabaseMetaData.
//
// Arguments: JDBC URL, user. SCENARIO_PREFIX names this run's objects;
// SCENARIO_TARGET=postgres runs the scenario against PostgreSQL itself,
// with a plain view instead of a materialized one and without SUBSCRIBE,
// which checks the scenario's own expectations. Exits non-zero on the
// first failed assertion.
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

public class Scenario {
    static void expect(Object got, Object want, String what) {
        if (!Objects.equals(got, want)) {
            throw new AssertionError(what + ": got " + got + ", want " + want);
        }
    }

    public static void main(String[] args) throws Exception {
        String url = args[0], user = args[1];
        String p = System.getenv("SCENARIO_PREFIX");
        boolean rockstream = !"postgres".equals(System.getenv("SCENARIO_TARGET"));
        try (Connection c = DriverManager.getConnection(url, user, "")) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + p + "_orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2))");
                st.execute("CREATE " + (rockstream ? "MATERIALIZED VIEW " : "VIEW ") + p + "_totals AS "
                        + "SELECT customer, sum(amount) AS total, count(*) AS n FROM " + p + "_orders GROUP BY customer");
            }

            // Parameterized DML through a prepared statement; pgJDBC switches
            // to a named server-side statement from the fifth execution.
            try (PreparedStatement ins = c.prepareStatement("INSERT INTO " + p + "_orders VALUES (?, ?, ?)")) {
                Object[][] rows = {{1, "alice", "10.50"}, {2, "bob", "3.25"}, {3, "alice", "1.00"}};
                for (Object[] r : rows) {
                    ins.setInt(1, (Integer) r[0]);
                    ins.setString(2, (String) r[1]);
                    ins.setBigDecimal(3, new BigDecimal((String) r[2]));
                    expect(ins.executeUpdate(), 1, "rows inserted");
                }
            }

            // A committed transaction and a rolled-back one.
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.executeUpdate("INSERT INTO " + p + "_orders VALUES (4, 'carol', 7)");
                st.executeUpdate("UPDATE " + p + "_orders SET amount = amount + 1 WHERE id = 2");
                c.commit();
                st.executeUpdate("INSERT INTO " + p + "_orders VALUES (5, 'dave', 100)");
                c.rollback();
            }
            c.setAutoCommit(true);

            // Read the view.
            expect(viewRows(c, p), List.of("alice 11.50 2", "bob 4.25 1", "carol 7.00 1"), "view after transactions");

            // COPY in and out.
            CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
            long in = copy.copyIn("COPY " + p + "_orders FROM STDIN", new StringReader("6\terin\t2.50\n7\talice\t0.50\n"));
            expect(in, 2L, "COPY FROM rows");
            StringWriter out = new StringWriter();
            copy.copyOut("COPY (SELECT customer, total, n FROM " + p + "_totals ORDER BY customer) TO STDOUT WITH (FORMAT csv)", out);
            expect(out.toString(), "alice,12.00,3\nbob,4.25,1\ncarol,7.00,1\nerin,2.50,1\n", "COPY TO STDOUT");

            // A fetch size reads a result a few rows per round trip: pgJDBC
            // fetches a named portal in a transaction block, two rows per
            // Execute.
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.setFetchSize(2);
                List<String> fetched = new ArrayList<>();
                try (ResultSet rs = st.executeQuery("SELECT id, customer FROM " + p + "_orders WHERE id <= 7")) {
                    while (rs.next()) {
                        fetched.add(rs.getInt(1) + " " + rs.getString(2));
                    }
                }
                Collections.sort(fetched);
                expect(fetched, List.of("1 alice", "2 bob", "3 alice", "4 carol", "6 erin", "7 alice"), "rows fetched two at a time");
            }
            c.commit();
            c.setAutoCommit(true);

            // SUBSCRIBE through a cursor sees a change committed by another connection.
            if (rockstream) {
                try (Connection sub = DriverManager.getConnection(url, user, "")) {
                    sub.setAutoCommit(false);
                    try (Statement s = sub.createStatement(); Statement w = c.createStatement()) {
                        s.execute("DECLARE c CURSOR FOR SUBSCRIBE " + p + "_totals WITH (SNAPSHOT = false)");
                        w.executeUpdate("INSERT INTO " + p + "_orders VALUES (8, 'bob', 1.00)");
                        List<String> changes = new ArrayList<>();
                        try (ResultSet rs = s.executeQuery("FETCH ALL c WITH (timeout = '10s')")) {
                            while (rs.next()) {
                                changes.add(rs.getLong("diff") + " " + rs.getString("customer") + " "
                                        + rs.getBigDecimal("total") + " " + rs.getLong("n"));
                            }
                        }
                        Collections.sort(changes);
                        expect(changes, List.of("-1 bob 4.25 1", "1 bob 5.25 2"), "SUBSCRIBE changes");
                    }
                    sub.rollback();
                }
            } else {
                try (Statement w = c.createStatement()) {
                    w.executeUpdate("INSERT INTO " + p + "_orders VALUES (8, 'bob', 1.00)");
                }
            }

            // An error leaves the session usable.
            try (Statement st = c.createStatement()) {
                try {
                    st.executeQuery("SELECT 1/0");
                    throw new AssertionError("division by zero did not fail");
                } catch (SQLException e) {
                    expect(e.getSQLState(), "22012", "SQLSTATE");
                }
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + p + "_orders")) {
                    rs.next();
                    expect(rs.getLong(1), 7L, "rows after the error");
                }
            }

            // Metadata lists RockStream's objects.
            DatabaseMetaData md = c.getMetaData();
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = md.getTables(null, "public", p + "_%", new String[] {"TABLE", "VIEW", "MATERIALIZED VIEW"})) {
                while (rs.next()) {
                    tables.add(rs.getString("TABLE_NAME") + ":" + rs.getString("TABLE_TYPE"));
                }
            }
            // pgJDBC orders by TABLE_TYPE, then name.
            expect(tables, rockstream ? List.of(p + "_totals:MATERIALIZED VIEW", p + "_orders:TABLE")
                    : List.of(p + "_orders:TABLE", p + "_totals:VIEW"), "getTables");
            List<String> cols = new ArrayList<>();
            try (ResultSet rs = md.getColumns(null, "public", p + "_orders", null)) {
                while (rs.next()) {
                    cols.add(rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME") + " "
                            + rs.getInt("COLUMN_SIZE") + " " + rs.getString("IS_NULLABLE"));
                }
            }
            expect(cols, List.of("id int4 10 NO", "customer text 2147483647 NO", "amount numeric 10 YES"), "getColumns");
        }
        System.out.println("ok");
    }

    static List<String> viewRows(Connection c, String p) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT customer, total, n FROM " + p + "_totals ORDER BY customer")) {
            while (rs.next()) {
                rows.add(rs.getString(1) + " " + rs.getBigDecimal(2) + " " + rs.getLong(3));
            }
        }
        return rows;
    }
}
