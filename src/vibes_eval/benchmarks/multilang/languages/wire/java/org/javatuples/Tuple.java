package org.javatuples;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

/**
 * What MultiPL-E's Java prompts use of javatuples (`import org.javatuples.*;`, `Pair`),
 * written here for vibes-eval (Debian does not package javatuples): immutable tuples
 * compared, hashed and printed by their values as javatuples does.
 */
public abstract class Tuple implements Iterable<Object>, Comparable<Tuple>, Serializable {
    private final Object[] values;

    protected Tuple(Object... values) {
        this.values = values.clone();
    }

    public abstract int getSize();

    public final Object getValue(int pos) {
        if (pos < 0 || pos >= values.length) {
            throw new IllegalArgumentException("Cannot retrieve position " + pos + " in " + getClass().getSimpleName());
        }
        return values[pos];
    }

    public final List<Object> toList() {
        return Collections.unmodifiableList(Arrays.asList(values.clone()));
    }

    public final Object[] toArray() {
        return values.clone();
    }

    public final boolean contains(Object value) {
        return Arrays.asList(values).contains(value);
    }

    @Override
    public final Iterator<Object> iterator() {
        return toList().iterator();
    }

    @Override
    public final boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && Arrays.equals(values, ((Tuple) o).values);
    }

    @Override
    public final int hashCode() {
        return 31 + Arrays.hashCode(values);
    }

    @Override
    public final String toString() {
        return Arrays.toString(values);
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public int compareTo(Tuple o) {
        for (int k = 0; k < Math.min(values.length, o.values.length); k++) {
            int c = ((Comparable) values[k]).compareTo(o.values[k]);
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(values.length, o.values.length);
    }
}
