package org.javatuples;

/** javatuples' Triplet (see Tuple). */
public final class Triplet<A, B, C> extends Tuple {
    private final A val0;
    private final B val1;
    private final C val2;

    public Triplet(A value0, B value1, C value2) {
        super(value0, value1, value2);
        this.val0 = value0;
        this.val1 = value1;
        this.val2 = value2;
    }

    public static <A, B, C> Triplet<A, B, C> with(A value0, B value1, C value2) {
        return new Triplet<>(value0, value1, value2);
    }

    @Override
    public int getSize() {
        return 3;
    }

    public A getValue0() {
        return val0;
    }

    public B getValue1() {
        return val1;
    }

    public C getValue2() {
        return val2;
    }

    public <X> Triplet<X, B, C> setAt0(X value) {
        return new Triplet<>(value, val1, val2);
    }

    public <X> Triplet<A, X, C> setAt1(X value) {
        return new Triplet<>(val0, value, val2);
    }

    public <X> Triplet<A, B, X> setAt2(X value) {
        return new Triplet<>(val0, val1, value);
    }
}
