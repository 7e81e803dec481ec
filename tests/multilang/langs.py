"""Problems written for the tests in HumanEval-X's formats for JavaScript, Java and Go,
and MultiPL-E rows (their fields as the datasets have them), with right and wrong
completions."""

from __future__ import annotations

JS = {
    "task_id": "JavaScript/0",
    "prompt": "/* Add two numbers.\n  >>> add(1, 2)\n  3\n  */\nconst add = (a, b) => {\n",
    "declaration": "\nconst add = (a, b) => {\n",
    "canonical_solution": "  return a + b;\n}\n\n",
    "test": "const testAdd = () => {\n  console.assert(add(1, 2) === 3)\n"
            "  console.assert(JSON.stringify([add(0, 0)]) === JSON.stringify([0]))\n}\n\ntestAdd()\n",
}  # fmt: skip
JAVA = {
    "task_id": "Java/0",
    "prompt": "import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n    /**\n    Add.\n"
              "     */\n    public List<Integer> addAll(List<Integer> xs, int k) {\n",
    "declaration": "import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n"
                   "    public List<Integer> addAll(List<Integer> xs, int k) {\n",
    "canonical_solution": "        List<Integer> out = new ArrayList<>();\n"
                          "        for (int x : xs) out.add(x + k);\n        return out;\n    }\n}",
    "test": "public class Main {\n    public static void main(String[] args) {\n"
            "        Solution s = new Solution();\n        List<Boolean> correct = Arrays.asList(\n"
            "                s.addAll(Arrays.asList(1, 2), 1).equals(Arrays.asList(2, 3)),\n"
            "                s.addAll(new ArrayList<>(), 5).equals(new ArrayList<>())\n        );\n"
            "        if (correct.contains(false)) {\n            throw new AssertionError();\n"
            "        }\n    }\n}",
}  # fmt: skip
GO = {
    "task_id": "Go/0",
    "prompt": "import (\n    \"math\"\n)\n\n// Distance from zero.\nfunc Dist(x float64) float64 {\n",
    "import": "import (\n    \"math\"\n)\n",
    "declaration": "\nfunc Dist(x float64) float64 {\n",
    "canonical_solution": "    return math.Abs(x)\n}\n\n",
    "test_setup": "package main\n\nimport (\n    \"testing\"\n    \"github.com/stretchr/testify/assert\"\n)\n",
    "test": "func TestDist(t *testing.T) {\n    assert := assert.New(t)\n"
            "    assert.Equal(2.0, Dist(-2))\n    assert.Equal(3.0, Dist(3))\n}\n",
}  # fmt: skip

# (problem, right completion, wrong completion)
HUMANEVAL_X = {
    "js": (JS, JS["canonical_solution"], "  return a - b;\n}\n"),
    "java": (JAVA, JAVA["canonical_solution"],
             "        return xs;\n    }\n}"),
    "go": (GO, GO["canonical_solution"], "    return x\n}\n"),
}  # fmt: skip

# Cheats that must not pass: language -> completions (for the problem above)
HOSTILE = {
    "js": [
        "  process.exit(0);\n}\n",
        "  return a + b;\n}\nconsole.assert = () => {};\n",
        "  return {toJSON() { return [0]; }};\n}\n",
        "  const f = require('fs'); return f.readFileSync(0, 'utf8');\n}\n",
        "  return (function () { return this; })().process.exit(0);\n}\n",
    ],
    "java": [
        "        System.exit(0);\n        return xs;\n    }\n}",
        "        return new ArrayList<Integer>() { public boolean equals(Object o) "
        "{ return true; } };\n    }\n}",
        "        Runtime.getRuntime().halt(0);\n        return xs;\n    }\n}",
        "        return xs;\n    }\n}\nclass VibesRun { public static void main(String[] a) {} }",
    ],
    "go": [
        "    os.Exit(0)\n    return x\n}\n",
        "    return x\n}\nfunc TestMain(m *testing.M) {}\n",
        "    return x\n}\nfunc init() { panic(1) }\n",
    ],
}

CPP_MULTIPLE = {
    "name": "HumanEval_53_add",
    "language": "cpp",
    "prompt": "#include<assert.h>\n#include<bits/stdc++.h>\n// Add two numbers x and y\n"
              "long add(long x, long y) {\n",
    "tests": "}\nint main() {\n    auto candidate = add;\n    assert(candidate((0), (1)) == (1));\n"
             "    assert(candidate((5), (7)) == (12));\n}\n",
    "stop_tokens": ["\n}"],
}  # fmt: skip
JS_MULTIPLE = {
    "name": "HumanEval_53_add",
    "language": "js",
    "prompt": "//Add two numbers x and y\nfunction add(x, y){\n",
    "tests": "const assert = require('node:assert');\n\n\nfunction test() {\n"
             "  let candidate = add;\n  assert.deepEqual(candidate(0, 1),1);\n"
             "  assert.deepEqual(candidate(5, 7),12);\n}\n\ntest();",
    "stop_tokens": ["\nfunction ", "\n/*", "\n//", "\nconsole.log"],
}  # fmt: skip
PERL_MULTIPLE = {
    "name": "HumanEval_53_add",
    "language": "pl",
    "prompt": "# Add two numbers x and y\nsub add {\n    my($x, $y) = @_;\n",
    "tests": "use Test::Deep;\n\n\nsub testhumaneval {\n    my $candidate = \\&add;\n"
             "        if(eq_deeply($candidate->(0, 1),1)) {\n        print \"ok!\" }else{\n"
             "        exit 1;\n        }\n        if(eq_deeply($candidate->(5, 7),12)) {\n"
             "        print \"ok!\" }else{\n        exit 1;\n        }\n}\n\ntesthumaneval();",
    "stop_tokens": ["\nsub", "\n#", "\n\n"],
}  # fmt: skip
JAVA_MULTIPLE = {
    "name": "HumanEval_8_sum_product",
    "language": "java",
    "prompt": "import java.util.*;\nimport java.lang.reflect.*;\nimport org.javatuples.*;\n"
              "import java.security.*;\nimport java.math.*;\nimport java.io.*;\n"
              "import java.util.stream.*;\nclass Problem {\n    // Sum and product.\n"
              "    public static Pair<Long, Long> sumProduct(ArrayList<Long> numbers) {\n",
    "tests": "    }\n    public static void main(String[] args) {\n"
             "    assert(sumProduct((new ArrayList<Long>(Arrays.asList()))).equals((Pair.with(0l, 1l))));\n"
             "    assert(sumProduct((new ArrayList<Long>(Arrays.asList((long)3l, (long)5l, (long)7l))))"
             ".equals((Pair.with(15l, 105l))));\n    }\n\n}\n",
    "stop_tokens": ["\n    }\n"],
}  # fmt: skip
MULTIPLE = {
    "cpp": (CPP_MULTIPLE, "    return x + y;\n", "    return x - y;\n"),
    "java": (JAVA_MULTIPLE,
             "        long s = 0, p = 1;\n        for (long x : numbers) { s += x; p *= x; }\n"
             "        return Pair.with(s, p);\n", "        return Pair.with(0l, 1l);\n"),
    "js": (JS_MULTIPLE, "  return x + y;\n}\n", "  return x - y;\n}\n"),
    "perl": (PERL_MULTIPLE, "    return $x + $y;\n}\n", "    return $x - $y;\n}\n"),
}  # fmt: skip
