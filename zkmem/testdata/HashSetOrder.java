import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

// Replays lines from stdin on a HashSet<String>(8), as DataNode keeps a
// node's children: "+name" adds, "-name" removes, "!" starts over with no
// set (a new parent), "?" prints the set in iteration order on one line,
// names separated by '/', then a newline.
public class HashSetOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        Set<String> set = null;
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isEmpty()) {
                continue;
            }
            char op = line.charAt(0);
            String name = line.substring(1);
            if (op == '+') {
                if (set == null) {
                    set = new HashSet<String>(8);
                }
                set.add(name);
            } else if (op == '-') {
                if (set != null) {
                    set.remove(name);
                }
            } else if (op == '!') {
                set = null; // a new parent
            } else if (op == '?') {
                out.append(set == null ? "" : String.join("/", set)).append('\n');
            }
        }
        java.io.PrintStream ps = new java.io.PrintStream(System.out, false, "UTF-8");
        ps.print(out);
        ps.flush();
    }
}
