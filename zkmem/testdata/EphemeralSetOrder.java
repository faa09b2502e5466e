import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;

// Replays lines from stdin on a HashSet<String>(), as DataTree keeps a
// session's ephemerals: "+path" adds, "-path" removes, "!" starts over with
// no set (a new session), "?" prints a clone of the set (what
// DataTree.getEphemerals returns) in iteration order on one line, paths
// separated by ' ', then a newline.
public class EphemeralSetOrder {
    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        HashSet<String> set = null;
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isEmpty()) {
                continue;
            }
            char op = line.charAt(0);
            String path = line.substring(1);
            if (op == '+') {
                if (set == null) {
                    set = new HashSet<String>();
                }
                set.add(path);
            } else if (op == '-') {
                if (set != null) {
                    set.remove(path);
                }
            } else if (op == '!') {
                set = null; // a new session
            } else if (op == '?') {
                HashSet<String> clone = set == null ? new HashSet<String>() : (HashSet<String>) set.clone();
                out.append(String.join(" ", clone)).append('\n');
            }
        }
        java.io.PrintStream ps = new java.io.PrintStream(System.out, false, "UTF-8");
        ps.print(out);
        ps.flush();
    }
}
