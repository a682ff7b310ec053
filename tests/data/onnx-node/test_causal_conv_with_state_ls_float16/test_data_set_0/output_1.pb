
Bpresent_stateJÀ´E;	1¹¸·5ã;ª2”:49Š±9#9