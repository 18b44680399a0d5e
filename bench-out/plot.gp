set terminal png size 1000,600
set output 'latency.png'
set title 'Home timeline latency (mixed workload 60/30/10)'
set logscale x
set logscale y
set grid
set xlabel 'percentile'
set ylabel 'ms'
set xtics ('50' 2, '90' 10, '99' 100, '99.9' 1000, '99.99' 10000, '99.999' 100000)
plot 'home_warble.dat' using (1/(1-$1/100)):2 with lines lw 2 title 'Warble', 'visible_warble.dat' using (1/(1-$1/100)):2 with lines lw 2 title 'Warble publish-to-visible'
set output 'fanout.png'
set title 'One post to F followers: time until in every timeline'
set xlabel 'followers'
set ylabel 'seconds'
set xtics auto
plot 'fanout.dat' using 1:2 with linespoints lw 2 title 'Warble'
