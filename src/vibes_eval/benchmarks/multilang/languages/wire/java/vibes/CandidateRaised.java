package vibes;

/** The candidate's entry point threw: what it threw, as it described it. */
public final class CandidateRaised extends RuntimeException {
    public CandidateRaised(String what) {
        super(what);
    }
}
