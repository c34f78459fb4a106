// PropsDump loads each file named on the command line with
// java.util.Properties.load(InputStream), as Kafka loads worker files, and
// prints one line per file: ERR, or the entries sorted by key as
// hex(UTF-16 key)=hex(UTF-16 value) separated by spaces.
// Used by TestParsePropertiesMatchesJava.
import java.io.FileInputStream;
import java.io.InputStream;
import java.util.Properties;
import java.util.TreeMap;

public class PropsDump {
    static String hex(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) b.append(String.format("%04x", (int) c));
        return b.toString();
    }

    public static void main(String[] args) throws Exception {
        for (String f : args) {
            Properties p = new Properties();
            try (InputStream in = new FileInputStream(f)) {
                p.load(in);
            } catch (IllegalArgumentException e) {
                System.out.println("ERR");
                continue;
            }
            TreeMap<String, String> m = new TreeMap<>();
            for (String k : p.stringPropertyNames()) m.put(hex(k), hex(p.getProperty(k)));
            StringBuilder b = new StringBuilder();
            m.forEach((k, v) -> b.append(k).append('=').append(v).append(' '));
            System.out.println(b.toString().trim());
        }
    }
}
