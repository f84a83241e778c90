// bench_simdjson.cpp - simdjson On-Demand (3.x) over the whole plain JSON file
// (On-Demand needs the document in one padded buffer, so peak RSS follows the
// file size), extracting the same per-event fields as bench_aorta/bench_yajl.
// Verification: kernel count and kernel-duration sum (ns from the raw number
// text) must match the other two.  Usage: bench_simdjson FILE.json [RUNS]
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <sys/resource.h>

using namespace simdjson;

static double now(clockid_t id)
{
	timespec t;
	clock_gettime(id, &t);
	return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

static long long us_to_ns(std::string_view s)
{
	long long v = 0, frac = 0;
	int fd = 0;
	size_t i = 0;
	bool neg = false;
	if (i < s.size() && s[i] == '-') { neg = true; i++; }
	for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; i++) v = v * 10 + (s[i] - '0');
	if (i < s.size() && s[i] == '.')
		for (i++; i < s.size() && s[i] >= '0' && s[i] <= '9'; i++)
			if (fd < 3) { frac = frac * 10 + (s[i] - '0'); fd++; }
	while (fd < 3) { frac *= 10; fd++; }
	v = v * 1000 + frac;
	return neg ? -v : v;
}

int main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[2]) : 3;
	if (argc < 2 || runs < 1 || runs > 64) return 2;
	double t[64], ct[64];
	long long kernels = 0, dur_sum = 0, events = 0;
	size_t bytes = 0;
	for (int r = 0; r < runs; r++) {
		double a = now(CLOCK_MONOTONIC), ca = now(CLOCK_PROCESS_CPUTIME_ID);
		padded_string json = padded_string::load(argv[1]);
		bytes = json.size();
		ondemand::parser parser;
		ondemand::document doc = parser.iterate(json);
		kernels = dur_sum = events = 0;
		for (auto field : doc.get_object()) {
			std::string_view key = field.unescaped_key();
			if (key != "traceEvents") continue;
			for (ondemand::object ev : field.value().get_array()) {
				events++;
				bool x = false, kern = false;
				long long dur = 0;
				for (auto f : ev) {
					std::string_view k = f.unescaped_key();
					if (k == "ph") x = std::string_view(f.value().get_string()) == "X";
					else if (k == "cat") kern = std::string_view(f.value().get_string()) == "kernel";
					else if (k == "name") (void)f.value().get_string();
					else if (k == "ts") (void)us_to_ns(f.value().raw_json_token());
					else if (k == "dur") dur = us_to_ns(f.value().raw_json_token());
					else if (k == "pid" || k == "tid") (void)f.value().raw_json_token();
					else if (k == "args") {
						for (auto g : f.value().get_object()) {
							std::string_view ak = g.unescaped_key();
							if (ak == "stream" || ak == "device" || ak == "correlation")
								(void)g.value().raw_json_token();
						}
					}
				}
				if (x && kern) { kernels++; dur_sum += dur; }
			}
		}
		t[r] = now(CLOCK_MONOTONIC) - a;
		ct[r] = now(CLOCK_PROCESS_CPUTIME_ID) - ca;
	}
	std::sort(t, t + runs);
	std::sort(ct, ct + runs);
	rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double mb = double(bytes) / 1e6;
	printf("simdjson-ondemand json_MB=%.1f events=%lld kernels=%lld kernel_ns=%lld wall_MBps_best=%.0f "
	       "wall_MBps_median=%.0f cpu_MBps_best=%.0f cpu_MBps_median=%.0f peak_rss_MB=%.1f\n",
	       mb, events, kernels, dur_sum, mb / t[0], mb / t[runs / 2], mb / ct[0], mb / ct[runs / 2],
	       double(ru.ru_maxrss) / 1024.0);
	return 0;
}
