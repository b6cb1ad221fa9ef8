package io.datamem.benchmarks.report;

import java.util.ArrayList;
import java.util.List;

/**
 * The goals table at the top of the page: every goal's target, figure and verdict, each family's
 * goals asked of the section that shows its figures, and the reasons of those missed.
 */
final class GoalsSection extends Section {

    GoalsSection(PageInput input) {
        super(input);
    }

    /** Every goal, in the order of the page's table. */
    private List<Goal> evaluateGoals() {
        AllocationGoals allocation = new AllocationGoals(input);
        StatisticsSection statistics = new StatisticsSection(input);
        InterchangeSection interchange = new InterchangeSection(input);
        UcxSection ucx = new UcxSection(input);
        ArraysSection arrays = new ArraysSection(input);
        AccessSection access = new AccessSection(input);
        List<Goal> goals = new ArrayList<>();
        goals.add(new TraceSection(input).rssGoal());
        goals.add(allocation.defaultVsC());
        goals.add(allocation.poolGoal());
        goals.add(allocation.poolThreadsGoal());
        goals.add(allocation.alignedGoal());
        goals.add(statistics.statsGoal());
        goals.add(statistics.micrometerGoal());
        goals.add(new CurrentSection(input).currentGoal());
        goals.add(interchange.exchangeGoal());
        goals.add(interchange.upcallPairGoal());
        goals.add(interchange.ipcOpenGoal());
        goals.add(ucx.ucxVsMemcpyGoal());
        goals.add(ucx.ucxVsSocketGoal());
        goals.add(ucx.ucxRegistrationGoal());
        goals.add(new HugePagesSection(input).thpGoal());
        goals.add(arrays.arrayVsNumPy());
        goals.addAll(new ComputeSection(input).goals());
        goals.add(access.accessVsSegment(false));
        goals.add(access.accessVsSegment(true));
        goals.add(arrays.twoThreadsVsOne());
        return goals;
    }

    /** The goals table, then why each missed goal was missed. */
    String goals() {
        StringBuilder b = new StringBuilder("| goal | measured | verdict |\n|---|---|---|\n");
        List<Goal> goals = evaluateGoals();
        for (Goal g : goals) {
            b.append("| ").append(g.goal()).append(" | ").append(g.figure()).append(" | ").append(g.verdict())
                    .append(" |\n");
        }
        boolean any = false;
        for (Goal g : goals) {
            if (!g.why().isEmpty()) {
                if (!any) {
                    b.append("\n**Why goals were missed:**\n\n");
                    any = true;
                }
                b.append("* **").append(g.goal()).append(":** ").append(g.why()).append("\n");
            }
        }
        return b.toString();
    }
}
