package org.javatuples;

/** javatuples' Pair (see Tuple). */
public final class Pair<A, B> extends Tuple {
    private final A val0;
    private final B val1;

    public Pair(A value0, B value1) {
        super(value0, value1);
        this.val0 = value0;
        this.val1 = value1;
    }

    public static <A, B> Pair<A, B> with(A value0, B value1) {
        return new Pair<>(value0, value1);
    }

    @SuppressWarnings("unchecked")
    public static <X> Pair<X, X> fromArray(X[] values) {
        if (values == null || values.length != 2) {
            throw new IllegalArgumentException("Array must have exactly 2 elements in order to create a Pair");
        }
        return new Pair<>(values[0], values[1]);
    }

    public static <X> Pair<X, X> fromCollection(java.util.Collection<X> values) {
        java.util.List<X> xs = new java.util.ArrayList<>(values);
        if (xs.size() != 2) {
            throw new IllegalArgumentException("Collection must have exactly 2 elements in order to create a Pair");
        }
        return new Pair<>(xs.get(0), xs.get(1));
    }

    @Override
    public int getSize() {
        return 2;
    }

    public A getValue0() {
        return val0;
    }

    public B getValue1() {
        return val1;
    }

    public <X> Pair<X, B> setAt0(X value) {
        return new Pair<>(value, val1);
    }

    public <X> Pair<A, X> setAt1(X value) {
        return new Pair<>(val0, value);
    }

    public <C> Triplet<A, B, C> add(C value) {
        return new Triplet<>(val0, val1, value);
    }
}
