import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

// Login connects with the JDBC URL of its first argument (user, password
// and TLS settings among its parameters) and prints current_user, or the
// SQLSTATE and message of the failure.
public class Login {
    public static void main(String[] args) {
        try (Connection c = DriverManager.getConnection(args[0]);
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT current_user")) {
            rs.next();
            System.out.println("user " + rs.getString(1));
        } catch (java.sql.SQLException e) {
            System.out.println("error " + e.getSQLState() + " " + e.getMessage());
        }
    }
}
