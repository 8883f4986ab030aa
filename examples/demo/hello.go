// Command hello greets the world. It is the demo project of jido-bus:
// `make run` opens a copy of this folder, and `jido-bus conv chat demo`
// talks to it.
package main

import "fmt"

func main() {
	fmt.Println("Hello, world!")
}
