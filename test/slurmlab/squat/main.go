// Command squat holds a TCP port on 127.0.0.1 until it is killed, as a
// process the labs did not start would: integration.sh runs it on one
// lab's default port while the labs come up, so that every run proves a
// lab moves to free ports when its own are taken.
//
//	go run ./test/slurmlab/squat PORT
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: squat PORT")
		os.Exit(2)
	}
	port, err := strconv.Atoi(os.Args[1])
	if err != nil || port < 1 || port > 65535 {
		fmt.Fprintf(os.Stderr, "squat: bad port %q\n", os.Args[1])
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "squat: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("listening") // the caller waits for this line
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	ln.Close()
}
