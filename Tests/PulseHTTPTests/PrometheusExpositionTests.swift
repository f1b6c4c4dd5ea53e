import PulseHTTP
import Testing

@Suite struct PrometheusExpositionTests {
    @Test func metricWritesTheFamilyAndOneSample() {
        var out = PrometheusExposition()
        out.metric("a_total", .counter, "Things.", 3)
        out.metric("b_seconds", .gauge, "Age.", 1.5)
        #expect(
            out.text == "# HELP a_total Things.\n# TYPE a_total counter\na_total 3\n"
                + "# HELP b_seconds Age.\n# TYPE b_seconds gauge\nb_seconds 1.5\n")
    }

    @Test func labelledMetricSortsItsLabelValuesAndEscapesThem() {
        var out = PrometheusExposition()
        out.metric("c_total", .counter, "By app.", label: "app", ["b": 2, "a\"x": 1])
        #expect(
            out.text
                == "# HELP c_total By app.\n# TYPE c_total counter\nc_total{app=\"a\\\"x\"} 1\nc_total{app=\"b\"} 2\n")
    }

    @Test func histogramCountsRenderCumulativeBuckets() {
        let bounds: [Double] = [0.5, 1, 2.5]
        var series = HistogramCounts(bucketCount: bounds.count)
        for value in [0.25, 0.5, 0.75, 3, 2.5] { series.observe(value, bounds: bounds) }
        #expect(series.buckets == [2, 1, 1])
        #expect(series.count == 5)
        #expect(series.sum == 7)
        var out = PrometheusExposition()
        out.histogram("h_seconds", labels: ["route": "/x"], bounds: bounds, series)
        #expect(
            out.text == """
                h_seconds_bucket{route="/x",le="0.5"} 2
                h_seconds_bucket{route="/x",le="1"} 3
                h_seconds_bucket{route="/x",le="2.5"} 4
                h_seconds_bucket{route="/x",le="+Inf"} 5
                h_seconds_sum{route="/x"} 7
                h_seconds_count{route="/x"} 5

                """)
    }
}
